/** `integer`: a whole number within PostgreSQL's 32-bit `integer`. */
import { Type } from '@sinclair/typebox'
import { asDeclared, asStored, described, NO_SEARCH, ORDERED } from './common.js'
import { AS_JSON } from './plaintext.js'
import { Rejected, type FieldTypeImpl } from './types.js'

export const integerType: FieldTypeImpl = {
  input: (f) => Type.Integer({ ...described(f), minimum: f.min ?? -2_147_483_648, maximum: f.max ?? 2_147_483_647 }),
  output: () => Type.Integer(),
  column: () => ({ type: 'integer' }),
  filterable: true,
  indexed: true,
  operators: ORDERED,
  ...NO_SEARCH,
  // At most ten digits: anything longer cannot be stored, so it is a mistake, not a miss.
  filterValue: (text) => /^-?\d{1,10}$/.test(text) ? Number(text) : new Rejected('debe ser un número entero'),
  // The schema already made it a whole number in range.
  normalize: (value) => value as number,
  initial: asDeclared,
  defaultProblem: (declared) => Number.isInteger(declared) ? undefined : 'the default of an integer field must be a whole number',
  writeOnly: false,
  view: asStored,
  ...AS_JSON,
}
