/**
 * A cheap look at a body's shape before the JSON schema sees it (docs/operator-guide.md "Hostile input":
 * no request may hold the event loop). Ajv, which must collect every error
 * to name every missing field, would otherwise walk 200,000 items of an
 * array that may hold 200 and build an error for each, or one error per
 * key of a body holding 100,000 unknown keys. Here the top-level keys are
 * checked against the schema's properties and each declared array against
 * its `maxItems`, stopping at MAX_ERRORS problems; a body that passes is
 * bounded by its schema (its arrays hold at most `maxItems` items), so Ajv's
 * work on it is small.
 */
import type { FastifySchemaValidationError } from 'fastify'

/** At most this many problems are collected, and shown in `detalles` (docs/operator-guide.md "Hostile input"). */
export const MAX_ERRORS = 20

interface ObjectSchema {
  type?: unknown
  properties?: Record<string, { maxItems?: number }>
  patternProperties?: Record<string, unknown>
  additionalProperties?: unknown
  required?: string[]
}

const patterns = new WeakMap<object, RegExp[]>()

function patternsOf (schema: ObjectSchema): RegExp[] {
  let list = patterns.get(schema)
  if (list === undefined) {
    list = Object.keys(schema.patternProperties ?? {}).map((p) => new RegExp(p, 'u'))
    patterns.set(schema, list)
  }
  return list
}

const problem = (keyword: string, instancePath: string, params: Record<string, unknown>): FastifySchemaValidationError =>
  ({ keyword, instancePath, schemaPath: `#/${keyword}`, params })

/**
 * Problems of the body's top level (at most MAX_ERRORS), in Ajv's form so
 * one formatter (validation-errors.ts) words them; empty when the schema may
 * look at the body. When there are problems, missing required keys are
 * reported too, as Ajv would, since they decide the answer's text.
 */
export function bodyShapeProblems (schema: unknown, body: unknown): FastifySchemaValidationError[] {
  const s = schema as ObjectSchema | undefined
  if (s === undefined || s.type !== 'object' || s.properties === undefined) return []
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return []
  const found: FastifySchemaValidationError[] = []
  const closed = s.additionalProperties === false
  for (const key in body) {
    if (!Object.hasOwn(body, key)) continue
    const prop = Object.hasOwn(s.properties, key) ? s.properties[key] : undefined
    if (prop !== undefined) {
      const value = (body as Record<string, unknown>)[key]
      if (Array.isArray(value) && prop.maxItems !== undefined && value.length > prop.maxItems) {
        found.push(problem('maxItems', `/${key}`, { limit: prop.maxItems }))
      }
    } else if (closed && !patternsOf(s).some((p) => p.test(key))) {
      found.push(problem('additionalProperties', '', { additionalProperty: key }))
    }
    if (found.length >= MAX_ERRORS) break
  }
  if (found.length === 0) return found
  const missing = (s.required ?? []).filter((k) => !Object.hasOwn(body, k)).slice(0, MAX_ERRORS)
  return missing.length > 0 ? missing.map((k) => problem('required', '', { missingProperty: k })) : found
}
