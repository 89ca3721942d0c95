/**
 * Values for the tour's query parameters, read from the document's own
 * schemas: the first candidate that the parameter's schema accepts (its
 * enum, pattern, type), so a parameter added to the document gets a value
 * without an edit here.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { Registry } from '../../core/registry/types.js'
import { validDni } from '../helpers/http.js'

type Schema = Record<string, any>

const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: true })

/** Candidate texts: ids of every module, the date and time forms, a DNI, words. */
function candidates (registry: Registry, ids: ReadonlyMap<string, string>): string[] {
  const one = [
    ...ids.values(),
    ...registry.modules.map((m) => `${m.prefix}-2026-00001`),
    ...registry.modules.flatMap((m) => m.fields.flatMap((f) => f.enum ?? [])),
    '2026-06-01', '2026-06-01 10:30:00', '2026-06-01T10:30:00+02:00', '10:30', validDni(12345678), 'ejemplo', '3', '12.5', 'true', '-_created',
  ]
  return [...one, ...one.map((v) => `${v},${v}`)]
}

/** A value for a query parameter (a list of two for an array), or undefined when no candidate fits. */
export function sampleFor (schema: Schema, registry: Registry, ids: ReadonlyMap<string, string>): string | string[] | undefined {
  if (schema.type === 'array') {
    const item = sampleFor(schema.items, registry, ids)
    return typeof item === 'string' ? [item, item] : undefined
  }
  if (Array.isArray(schema.enum)) return String(schema.enum[0])
  if (schema.type === 'boolean') return 'false'
  const check = ajv.compile(schema)
  return candidates(registry, ids).find((c) => check(schema.type === 'string' ? c : Number.isNaN(Number(c)) ? c : Number(c)))
}
