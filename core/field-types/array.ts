/**
 * `array`: a list of texts or small objects (witnesses, items), stored as
 * jsonb; filtered only by `vacio` (empty or not). Nesting and every string inside are checked.
 * With declared `items` (a structured array, array-items.ts) each item is an
 * object of those sub-fields.
 */
import { Type } from '@sinclair/typebox'
import { jsonProblem } from '../text.js'
import { asDeclared, asStored, described, takesNoDefault } from './common.js'
import { AS_JSON } from './plaintext.js'
import { Rejected, type FieldTypeImpl } from './types.js'
import { itemInput, itemOutput } from './array-items.js'
import type { FieldDef } from '../registry/types.js'

const Item = Type.Unsafe<unknown>({
  type: ['string', 'number', 'boolean', 'object'],
  maxLength: 2000,
  maxProperties: 50,
  description: 'Texto u objeto (p. ej. datos de un testigo)',
})

/** What every list stored as jsonb shares (arrays, and file fields: file.ts). */
export const JSON_LIST = {
  column: () => ({ type: 'json', columnType: 'jsonb' }),
  filterable: false,
  indexed: false,
  operators: [],
  // Only whether it holds anything (db/search-sql.ts indexes that); list-query reads no value.
  searchOperators: ['vacio'],
  textSearch: false,
  empty: 'array',
  filterValue: (text: string) => text,
  normalize: (value: unknown) => {
    const problem = jsonProblem(value)
    return problem === undefined ? value as unknown[] : new Rejected(problem)
  },
  initial: asDeclared,
  defaultMaxItems: 200,
  writeOnly: false,
  ...AS_JSON,
} satisfies Partial<FieldTypeImpl>

export const arrayType: FieldTypeImpl = {
  ...JSON_LIST,
  input: (f, registry) => Type.Array(f.items === undefined ? Item : itemInput(f.items, registry), { ...described(f), maxItems: f.maxItems ?? 200 }),
  output: (f) => Type.Array(f.items === undefined ? Type.Unknown() : itemOutput(f.items)),
  defaultProblem: takesNoDefault('array'),
  view: asStored,
  printed: (value, f, each) => (value as unknown[]).map((item) => `• ${printedItem(item, f, each)}`).join('\n'),
}

/**
 * One item: a structured one by its sub-fields' labels (those `each` writes
 * as empty left out), a scalar as it is, another object as JSON.
 */
function printedItem (item: unknown, f: FieldDef, each: (value: unknown, f: FieldDef) => string): string {
  if (item === null || typeof item !== 'object') return String(item)
  const parts = (f.items ?? []).map((s) => [s.label, each((item as Record<string, unknown>)[s.name], s)] as const).filter(([, text]) => text !== '')
  return parts.length === 0 ? JSON.stringify(item) : parts.map(([label, text]) => `${label}: ${text}`).join('; ')
}
