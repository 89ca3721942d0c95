/**
 * TypeBox schemas of a module, used both to validate requests (Ajv, no
 * coercion, no stripping: an undeclared key or a wrong type is a 400) and to
 * document the API (OpenAPI through @fastify/swagger).
 */
import { Type, type TSchema, type TObject } from '@sinclair/typebox'
import type { FieldDef, ModuleDef, Registry } from '../core/registry/types.js'

const DATE = '^\\d{4}-\\d{2}-\\d{2}$'
const TIME = '^\\d{2}:\\d{2}$'

/** Makes a schema also accept null (JSON Schema type arrays, OpenAPI 3.1). */
function nullable (schema: TSchema): TSchema {
  const s = { ...schema } as Record<string, unknown>
  if (typeof s.type === 'string') s.type = [s.type, 'null']
  if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...(s.enum as unknown[]), null]
  return s as TSchema
}

const ArrayItem = Type.Unsafe<unknown>({
  type: ['string', 'number', 'boolean', 'object'],
  maxLength: 2000,
  maxProperties: 50,
  description: 'Texto u objeto (p. ej. datos de un testigo)',
})

/** Input schema of one field (what a client may send). */
export function inputSchema (f: FieldDef, registry: Registry): TSchema {
  const base = { ...(f.description !== undefined && { description: f.description }) }
  switch (f.type) {
    case 'string':
    case 'text':
    case 'password':
      return Type.String({
        ...base,
        ...(f.maxLength !== undefined && { maxLength: f.maxLength }),
        ...(f.minLength !== undefined && { minLength: f.minLength }),
        ...(f.pattern !== undefined && { pattern: f.pattern }),
        ...(f.enum !== undefined && { enum: [...f.enum] }),
        ...(f.type === 'password' && { writeOnly: true }),
      })
    case 'integer':
      return Type.Integer({ ...base, minimum: f.min ?? -2_147_483_648, maximum: f.max ?? 2_147_483_647 })
    case 'decimal':
      return Type.Number({ ...base, minimum: f.min ?? -999_999_999_999.99, maximum: f.max ?? 999_999_999_999.99, description: f.description ?? 'Número con dos decimales como máximo' })
    case 'boolean':
      return Type.Boolean(base)
    case 'date':
      return Type.String({ ...base, pattern: DATE, description: 'YYYY-MM-DD' })
    case 'datetime':
      return Type.String({ ...base, maxLength: 40, description: "'YYYY-MM-DD HH:MM:SS' (zona del servicio) o ISO 8601 con desfase" })
    case 'time':
      return Type.String({ ...base, pattern: TIME, description: 'HH:MM' })
    case 'array':
      return Type.Array(ArrayItem, { ...base, maxItems: f.maxItems ?? 200 })
    case 'ref': {
      const target = registry.byName.get(f.ref!)!
      return Type.String({ ...base, pattern: `^${target.prefix}-\\d{4}-\\d{5,}$`, description: f.description ?? `Id de ${target.label} (${target.prefix}-AAAA-NNNNN)` })
    }
  }
}

/** Output schema of one field (what a client receives). */
function outputSchema (f: FieldDef): TSchema {
  switch (f.type) {
    case 'integer': return nullable(Type.Integer())
    case 'decimal': return nullable(Type.Number())
    case 'boolean': return nullable(Type.Boolean())
    case 'array': return nullable(Type.Array(Type.Unknown()))
    default: return nullable(Type.String(f.enum !== undefined ? { enum: [...f.enum] } : {}))
  }
}

export interface ModuleSchemas {
  create: TObject
  update: TObject
  record: TObject
  list: TObject
}

/** Keys starting with `_` are system fields: accepted and ignored (`_version` is read on PUT). */
const SYSTEM_KEYS = { patternProperties: { '^_': {} } }

export function buildSchemas (mod: ModuleDef, registry: Registry): ModuleSchemas {
  const input: Record<string, TSchema> = {}
  const output: Record<string, TSchema> = {}
  for (const f of mod.fields) {
    const s = inputSchema(f, registry)
    // null is accepted by the schema so that a required field set to null is
    // reported as missing (Datos requeridos) by normalize.ts, not as a type error.
    input[f.name] = nullable(s)
    // Withheld encrypted fields are absent (named in _restringidos), so they are optional.
    if (f.type !== 'password') output[f.name] = f.encrypted ? Type.Optional(outputSchema(f)) : outputSchema(f)
  }
  const required = mod.fields.filter((f) => f.required && f.default === undefined).map((f) => f.name)
  const create = Type.Object(input, { $id: `${mod.name}Create`, additionalProperties: false, ...SYSTEM_KEYS })
  ;(create as { required?: string[] }).required = required
  const update = Type.Object({ ...input }, { $id: `${mod.name}Update`, additionalProperties: false, ...SYSTEM_KEYS })
  delete (update as { required?: string[] }).required
  const record = Type.Object({
    _id: Type.String({ description: `${mod.prefix}-AAAA-NNNNN` }),
    ...output,
    _created: Type.String(),
    _created_by: Type.String(),
    _modified: Type.String(),
    _modified_by: Type.String(),
    _version: Type.Integer(),
    _hash: Type.String(),
    _deleted: nullable(Type.String()),
    _restringidos: Type.Optional(Type.Array(Type.String(), { description: 'Campos cifrados que el usuario no puede ver' })),
  }, {
    $id: `${mod.name}Record`,
    description: 'Todos los campos declarados están presentes (null si no tienen valor), salvo los cifrados que el usuario no puede ver, nombrados en _restringidos.',
  })
  // No `required` list: the serializer then keeps the declared field order
  // (it writes required properties first), and withheld fields may be absent.
  delete (record as { required?: string[] }).required
  const list = Type.Object({
    records: Type.Array(Type.Ref(record)),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  }, { $id: `${mod.name}List` })
  return { create, update, record, list }
}
