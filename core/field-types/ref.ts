/**
 * `ref`: the id of a record of another module (`ref: <module>`). The shape
 * is checked here; that the record exists, by the record service.
 */
import { Type } from '@sinclair/typebox'
import { asDeclared, asStored, described, NO_SEARCH, SEARCHABLE, stringOutput, takesNoDefault } from './common.js'
import { AS_TEXT } from './plaintext.js'
import { textFilter } from './text-like.js'
import type { FieldTypeImpl } from './types.js'

export const refType: FieldTypeImpl = {
  input: (f, registry) => {
    const target = registry.byName.get(f.ref!)!
    return Type.String({
      ...described(f),
      pattern: `^${target.prefix}-\\d{4}-\\d{5,}$`,
      description: f.description ?? `Id de ${target.label} (${target.prefix}-AAAA-NNNNN)`,
    })
  },
  output: stringOutput,
  column: () => ({ type: 'string', length: 40 }),
  filterable: true,
  indexed: true,
  // Filtered as the text an id is, `contiene` included (a year, a prefix).
  operators: SEARCHABLE,
  ...NO_SEARCH,
  filterValue: textFilter,
  normalize: (value) => value as string,
  initial: asDeclared,
  defaultProblem: takesNoDefault('ref'),
  writeOnly: false,
  view: asStored,
  printed: (value) => String(value),
  ...AS_TEXT,
}
