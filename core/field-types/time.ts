/** `time`: a wall-clock time `HH:MM`, stored as `time(0)`. */
import { Type } from '@sinclair/typebox'
import { isValidTime } from '../time.js'
import { asDeclared, described, NO_SEARCH, ORDERED, stringOutput } from './common.js'
import { AS_TEXT } from './plaintext.js'
import { Rejected, type FieldTypeImpl } from './types.js'

export const timeType: FieldTypeImpl = {
  input: (f) => Type.String({ ...described(f), pattern: '^\\d{2}:\\d{2}$', description: 'HH:MM' }),
  output: stringOutput,
  column: () => ({ type: 'time', columnType: 'time(0)' }),
  filterable: true,
  indexed: true,
  operators: ORDERED,
  ...NO_SEARCH,
  filterValue: (text) => isValidTime(text) ? text : new Rejected('debe ser una hora HH:MM'),
  normalize: (value) => isValidTime(value as string) ? value as string : new Rejected('no es una hora válida (HH:MM)'),
  initial: asDeclared,
  // Any string is accepted as a default today (not checked as HH:MM).
  defaultProblem: (declared) => typeof declared === 'string' && isValidTime(declared) ? undefined : 'the default of a time field is HH:MM',
  writeOnly: false,
  // PostgreSQL returns `HH:MM:SS`.
  view: (stored) => String(stored).slice(0, 5),
  printed: (value) => String(value),
  ...AS_TEXT,
}
