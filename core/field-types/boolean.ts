/** `boolean`: true or false; filtered by equality only (it has no order worth asking for). */
import { Type } from '@sinclair/typebox'
import { asDeclared, asStored, described, NO_SEARCH } from './common.js'
import { AS_JSON } from './plaintext.js'
import { yesNo } from '../spanish-text.js'
import { Rejected, type FieldTypeImpl } from './types.js'

export const booleanType: FieldTypeImpl = {
  input: (f) => Type.Boolean(described(f)),
  output: () => Type.Boolean(),
  column: () => ({ type: 'boolean' }),
  filterable: true,
  indexed: true,
  operators: ['eq', 'ne', 'in', 'vacio'],
  ...NO_SEARCH,
  filterValue: (text) => text === 'true' ? true : text === 'false' ? false : new Rejected('debe ser true o false'),
  normalize: (value) => value as boolean,
  initial: asDeclared,
  defaultProblem: (declared) => typeof declared === 'boolean' ? undefined : 'the default of a boolean field must be true or false',
  writeOnly: false,
  view: asStored,
  printed: yesNo,
  ...AS_JSON,
}
