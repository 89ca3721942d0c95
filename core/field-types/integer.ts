/** `integer`: a whole number within PostgreSQL's 32-bit `integer`. */
import { Type } from '@sinclair/typebox'
import { asDeclared, asStored, described, NO_SEARCH, ORDERED } from './common.js'
import { AS_JSON } from './plaintext.js'
import { Rejected, type FieldTypeImpl } from './types.js'
import { countText } from '../spanish-text.js'

const INT_MIN = -2_147_483_648
const INT_MAX = 2_147_483_647

export const integerType: FieldTypeImpl = {
  input: (f) => Type.Integer({ ...described(f), minimum: f.min ?? INT_MIN, maximum: f.max ?? INT_MAX }),
  output: () => Type.Integer(),
  column: () => ({ type: 'integer' }),
  filterable: true,
  indexed: true,
  operators: ORDERED,
  ...NO_SEARCH,
  // Outside the 32-bit range nothing can be stored, so such a value is a
  // mistake, not a miss (and PostgreSQL refuses it as an integer parameter).
  filterValue: (text) => {
    if (!/^-?\d{1,10}$/.test(text)) return new Rejected('debe ser un número entero')
    const n = Number(text)
    return n >= INT_MIN && n <= INT_MAX ? n : new Rejected(`debe ser un número entero entre ${INT_MIN} y ${INT_MAX}`)
  },
  // The schema already made it a whole number in range.
  normalize: (value) => value as number,
  initial: asDeclared,
  defaultProblem: (declared) => Number.isInteger(declared) ? undefined : 'the default of an integer field must be a whole number',
  writeOnly: false,
  view: asStored,
  printed: (value) => countText(value as number),
  ...AS_JSON,
}
