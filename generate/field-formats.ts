/**
 * The machine-readable formats the OpenAPI document gives a field
 * (docs/user-guide.md "API explorer and OpenAPI document"): the patterns of
 * ids, dates, times and date-times, `multipleOf` of decimals, the service
 * time zone named. Documentation only: the field types' schemas validate
 * requests, and the checks no pattern can make (a local time in the spring
 * gap, a DNI's letter, two decimals within binary rounding) stay in their
 * normalize.
 */
import type { TSchema } from '@sinclair/typebox'
import type { FieldDef, Registry } from '../core/registry/types.js'
import { typeOf } from '../core/field-types/index.js'
import { formatOf } from '../core/field-types/formats/index.js'
import { DATE_PATTERN, DATETIME_INPUT_PATTERN, DATETIME_PATTERN, TIME_PATTERN, datetimeText } from '../core/time-patterns.js'

/** A record id of a module: `DEN-2026-00001` (core/system-fields.ts `_id`). */
export const idPattern = (prefix: string): string => `^${prefix}-\\d{4}-\\d{5,}$`

export const HASH_PATTERN = '^[0-9a-f]{64}$'
// The calendar's patterns belong with core/time.ts, which they describe; here for the generators that read them.
export { DATE_PATTERN, DATETIME_INPUT_PATTERN, DATETIME_PATTERN, TIME_PATTERN, datetimeText }

type Schema = Record<string, unknown>

/** A field's value schema (input or output) with the formats its type has words for. */
export function withFormat (f: FieldDef, registry: Registry, timeZone: string, schema: TSchema, input: boolean): TSchema {
  const s = { ...schema } as Schema
  switch (f.type) {
    case 'decimal':
      s.multipleOf = 0.01
      // What the number means (`format: euros`), where the schema says nothing yet (a record's).
      if (f.format !== undefined && s.description === undefined) s.description = formatOf(f)!.description
      break
    case 'date':
      s.pattern = DATE_PATTERN
      break
    case 'time':
      s.pattern = TIME_PATTERN
      break
    case 'datetime':
      s.pattern = input ? DATETIME_INPUT_PATTERN : DATETIME_PATTERN
      s.description = f.description !== undefined ? `${f.description}. ${datetimeText(timeZone, input)}` : datetimeText(timeZone, input)
      break
    case 'ref':
      s.pattern = idPattern(registry.byName.get(f.ref!)!.prefix)
      break
    default: {
      // A record shows a string as it was accepted (a DNI upper-cased, still within its pattern).
      const pattern = (typeOf(f).input(f, registry) as Schema).pattern
      if (!input && typeof pattern === 'string') s.pattern = pattern
    }
  }
  return s as TSchema
}
