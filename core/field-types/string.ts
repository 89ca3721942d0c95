/** `string`: a short text, optionally limited to enum values; filterable and indexed. */
import { SEARCHABLE } from './common.js'
import { TEXT_LIKE, textInput } from './text-like.js'
import type { FieldTypeImpl } from './types.js'

export const stringType: FieldTypeImpl = {
  ...TEXT_LIKE,
  input: (f) => textInput(f),
  // varchar, so that a longer max_length later is an ALTER that only widens (db/schema-sync.ts).
  column: (f) => ({ type: 'string', length: f.maxLength ?? 500 }),
  filterable: true,
  indexed: true,
  operators: SEARCHABLE,
  // A string declared `filterable: false` takes no operator at all.
  searchOperators: [],
  textSearch: true,
  empty: 'string',
  defaultMaxLength: 500,
  writeOnly: false,
}
