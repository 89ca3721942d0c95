/**
 * `text`: a long free text; not compared whole or sorted (a b-tree index
 * over it would be useless), but searched: `contiene`, `vacio` and `q`.
 */
import { TEXT_LIKE, textInput } from './text-like.js'
import type { FieldTypeImpl } from './types.js'

export const textType: FieldTypeImpl = {
  ...TEXT_LIKE,
  input: (f) => textInput(f),
  column: () => ({ type: 'text', columnType: 'text' }),
  filterable: false,
  indexed: false,
  operators: [],
  // Searched in, never compared whole or sorted: a trigram index serves
  // `contiene`, a b-tree over "empty" serves `vacio` (db/search-sql.ts).
  searchOperators: ['contiene', 'vacio'],
  textSearch: true,
  empty: 'string',
  defaultMaxLength: 20_000,
  writeOnly: false,
}
