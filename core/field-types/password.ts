/**
 * `password`: taken from the client, stored only as its Argon2id hash (in
 * `<column>_hash`, hashed by the record service), never shown or filtered.
 */
import { TEXT_LIKE, textInput } from './text-like.js'
import { NO_SEARCH } from './common.js'
import type { FieldTypeImpl } from './types.js'

export const passwordType: FieldTypeImpl = {
  ...TEXT_LIKE,
  input: (f) => textInput(f, { writeOnly: true }),
  // Room for an Argon2id PHC string.
  column: () => ({ type: 'string', length: 255 }),
  columnSuffix: '_hash',
  filterable: false,
  indexed: false,
  operators: [],
  ...NO_SEARCH,
  defaultProblem: () => 'a password has no default',
  defaultMaxLength: 256,
  writeOnly: true,
}
