/**
 * How request bodies are validated (Ajv): no coercion, no stripping, no
 * defaults (an undeclared key or a wrong type is a 400; defaults are
 * records/normalize.ts's), every error collected so each field is named.
 * The app's route validation (app.ts) and an import's rows
 * (generate/row-validator.ts) use the same.
 */
export const AJV_OPTIONS = { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true, strict: false } as const
