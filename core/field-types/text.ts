/** `text`: a long free text; never filtered (a b-tree index over it would be useless). */
import { TEXT_LIKE, textInput } from './text-like.js'
import type { FieldTypeImpl } from './types.js'

export const textType: FieldTypeImpl = {
  ...TEXT_LIKE,
  input: (f) => textInput(f),
  column: () => ({ type: 'text', columnType: 'text' }),
  filterable: false,
  indexed: false,
  operators: [],
  defaultMaxLength: 20_000,
  writeOnly: false,
}
