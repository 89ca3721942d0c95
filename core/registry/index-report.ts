/**
 * What `npm run check` says about indexes (docs/administrator-guide.md
 * "Indexes"): per module, the filters and searches it allows that no index
 * serves. They answer, exactly, by reading the table; over many rows they
 * are slow, and an administrator who sees them used declares the index.
 */
import { operatorsOf, typeOf } from '../field-types/index.js'
import { OPTIONAL_SYSTEM_INDEXES, SYSTEM_FIELDS } from '../system-fields.js'
import type { FieldDef, ModuleDef } from './types.js'

export interface UnindexedSearches {
  readonly module: string
  /** Fields whose filters (`campo=`, ranges, `vacio`) no index serves. */
  readonly filters: readonly string[]
  /** Fields whose `contiene` no trigram index serves. */
  readonly contains: readonly string[]
  /** False when the module declares nothing for `q` (it answers 400 there). */
  readonly fullText: boolean
}

/** System fields filterable in every module with no index of their own (`_id` and `_created` always have one; `_created_by`, `_modified`, `_modified_by` unless the module leaves it out). */
export const UNINDEXED_SYSTEM_FILTERS: readonly string[] = SYSTEM_FIELDS.filter((s) => s.filterable && s.name === '_version').map((s) => s.name)

/** `contiene` that folds case and accents over the text (an enum's is its values; an encrypted field has none). */
const substringSearch = (f: FieldDef): boolean => typeOf(f).textSearch && f.enum === undefined && !f.encrypted && operatorsOf(f).includes('contiene')

export function unindexedSearches (mod: ModuleDef): UnindexedSearches {
  const open = mod.fields.filter((f) => !f.encrypted && operatorsOf(f).length > 0)
  return {
    module: mod.name,
    filters: [
      ...OPTIONAL_SYSTEM_INDEXES.filter((name) => !mod.indexedSystemFields.includes(name)),
      ...open.filter((f) => !f.indexed).map((f) => f.name),
    ],
    contains: open.filter((f) => substringSearch(f) && !f.containsIndex).map((f) => f.name),
    fullText: mod.fullText.length > 0,
  }
}
