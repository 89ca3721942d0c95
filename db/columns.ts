/**
 * How each declared field maps to storage: column name and MikroORM column
 * definition. Shared by the entity builder and the record mapper so the two
 * never disagree. What a type needs is its own (field-types/); what
 * encryption needs is decided here.
 */
import type { ColumnSpec } from '../core/column-spec.js'
import type { FieldDef } from '../core/registry/types.js'
import { typeOf } from '../core/field-types/index.js'

export type { ColumnSpec }

/** Column holding the field's value (a password field stores only its hash). */
export function valueColumn (f: FieldDef): string {
  return `${f.column}${typeOf(f).columnSuffix ?? ''}`
}

/** Column holding the blind index of a searchable encrypted field. */
export function blindIndexColumn (f: FieldDef): string {
  return `${f.column}_bidx`
}

/**
 * Column holding the blind indexes of a structured array's searchable
 * encrypted sub-fields, every item's (a jsonb array; records/item-index.ts).
 */
export function itemIndexColumn (f: FieldDef): string {
  return `${f.column}_bidx`
}

/** The searchable encrypted sub-fields of a structured array (none for any other field). */
export function searchableItems (f: FieldDef): readonly FieldDef[] {
  return f.items === undefined ? [] : f.items.filter((s) => s.searchable && s.encrypted)
}

/** An encrypted value is ciphertext text whatever its type. */
export function columnSpec (f: FieldDef): ColumnSpec {
  return f.encrypted ? { type: 'text', columnType: 'text' } : typeOf(f).column(f)
}

/** Fields compared by their stored value, which a b-tree can order (filterable values of such a type; encrypted values never). */
export function comparesByValue (f: FieldDef): boolean {
  return f.filterable && typeOf(f).indexed && !f.encrypted
}

/** Fields that get a b-tree index: compared by value, and indexed (declared or implied by their role, core/registry/index-keys.ts). */
export function isIndexed (f: FieldDef): boolean {
  return f.indexed && comparesByValue(f)
}

/**
 * When the data-protection officer blocked a record, or null (modules with
 * personal data only, ModuleDef.personalData): not sealed, since it changes
 * who may read the record and not what it says (docs/decisions.md "Blocking
 * personal data is access, not a version").
 */
export const BLOCKED_COLUMN = '_bloqueado'
