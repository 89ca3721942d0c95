/** `date`: a calendar day `YYYY-MM-DD`, no time zone; `default: now` is today in the service zone. */
import { Type } from '@sinclair/typebox'
import { isValidDate, today } from '../time.js'
import { asStored, described, NO_SEARCH, ORDERED, stringOutput } from './common.js'
import { AS_TEXT } from './plaintext.js'
import { Rejected, type FieldTypeImpl } from './types.js'
import { dateText } from '../spanish-text.js'

export const dateType: FieldTypeImpl = {
  // The pattern gives clients the shape; normalize checks the day exists.
  input: (f) => Type.String({ ...described(f), pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' }),
  output: stringOutput,
  column: () => ({ type: 'date' }),
  filterable: true,
  indexed: true,
  operators: ORDERED,
  ...NO_SEARCH,
  filterValue: (text) => isValidDate(text) ? text : new Rejected('debe ser una fecha YYYY-MM-DD entre los años 1000 y 9999'),
  normalize: (value) => isValidDate(value as string) ? value as string : new Rejected('no es una fecha válida (YYYY-MM-DD, entre los años 1000 y 9999)'),
  initial: (declared, timeZone) => declared === 'now' ? today(new Date(), timeZone) : declared,
  defaultProblem: (declared) => declared === 'now' || (typeof declared === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(declared))
    ? undefined
    : 'the default of a date field is "now" or YYYY-MM-DD',
  writeOnly: false,
  view: asStored,
  printed: (value) => dateText(String(value)),
  ...AS_TEXT,
}
