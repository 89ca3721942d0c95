/**
 * `datetime`: an instant. Clients write it in the service time zone or as
 * ISO 8601 with an offset; the API shows it in the service zone and the
 * hash in UTC, so a change of zone never changes a hash.
 */
import { Type } from '@sinclair/typebox'
import { isoText, parseDateTime } from '../time.js'
import { described, NO_SEARCH, nowOrDeclared, ORDERED, stringOutput } from './common.js'
import { Rejected, type FieldTypeImpl } from './types.js'
import { dateText } from '../spanish-text.js'

export const datetimeType: FieldTypeImpl = {
  input: (f) => Type.String({ ...described(f), maxLength: 40, description: "'YYYY-MM-DD HH:MM:SS' (zona del servicio) o ISO 8601 con desfase" }),
  output: stringOutput,
  column: () => ({ type: 'datetime', columnType: 'timestamptz' }),
  filterable: true,
  indexed: true,
  operators: ORDERED,
  ...NO_SEARCH,
  filterValue: (text, timeZone) => parseDateTime(text, timeZone) ?? new Rejected("debe ser una fecha y hora 'YYYY-MM-DD HH:MM:SS' entre los años 1000 y 9999"),
  normalize: (value, timeZone) => parseDateTime(value as string, timeZone) ??
    new Rejected("no es una fecha y hora válida ('YYYY-MM-DD HH:MM:SS' o ISO 8601 con desfase, entre los años 1000 y 9999)"),
  // The registry allows only `now` (defaultProblem), which is the clock.
  initial: nowOrDeclared,
  defaultProblem: (declared) => declared === 'now' ? undefined : 'the default of a datetime field can only be "now"',
  writeOnly: false,
  // Rows read back hold Dates; history snapshots (JSON) hold ISO strings.
  view: (stored, instant) => instant(stored instanceof Date ? stored : new Date(stored as string)),
  printed: (value) => dateText(String(value)),
  // Encrypted, digested and blind-indexed as its UTC instant
  // `YYYY-MM-DDTHH:MM:SSZ` (the form the hash uses for plain datetimes).
  toPlaintext: (value) => isoText(value instanceof Date ? value : new Date(value as string), false),
  fromPlaintext: (text) => new Date(text),
}
