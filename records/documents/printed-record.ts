/**
 * What a printed copy of a record says (docs/user-guide.md "Printed
 * records"), before any layout: the record as the caller may read it, each
 * field by its label and its value in Spanish (core/spanish-text.ts,
 * each field type's `printed`), choices by their labels, a withheld
 * encrypted value as "Restringido", the fields `documento.excluir` names
 * left out; its id, version, dates and seal; and the signed code.
 */
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { typeOf } from '../../core/field-types/index.js'
import { dateText } from '../../core/spanish-text.js'
import type { ApiRecord } from '../records-service.js'
import { selectable, selectionOf, type FieldSelection } from '../fields-query.js'

export interface PrintedField {
  readonly label: string
  readonly value: string
}

export interface PrintedRecord {
  /** The module's label: the document's title. */
  readonly title: string
  readonly id: string
  readonly version: number
  readonly created: string
  readonly modified: string
  /** The version's `_hash`, the seal the code signs. */
  readonly hash: string
  readonly fields: readonly PrintedField[]
}

export const WITHHELD = 'Restringido'
/** An empty value: shown, so that a reader knows the field was left blank rather than left out. */
export const EMPTY = '—'

/** One value as printed: a choice by its label, then by its type; '' for none. */
function valueText (value: unknown, f: FieldDef, withheld: ReadonlySet<string>, path: string): string {
  if (value === undefined) return withheld.has(path) ? WITHHELD : ''
  if (value === null || value === '' || (Array.isArray(value) && value.length === 0)) return ''
  if (typeof value === 'string' && f.enumLabels?.[value] !== undefined) return f.enumLabels[value]
  return typeOf(f).printed(value, f, (v, sub) => valueText(v, sub, withheld, `${path}.${sub.name}`))
}

/** What a printed copy reads of a record: every field a GET shows but those `documento.excluir` leaves out (cached per module). */
const selections = new WeakMap<ModuleDef, FieldSelection>()
export function printedSelection (mod: ModuleDef): FieldSelection {
  let s = selections.get(mod)
  if (s === undefined) {
    const excluded = new Set(mod.printExcluded)
    selections.set(mod, s = selectionOf(mod, selectable(mod).filter((name) => !excluded.has(name))))
  }
  return s
}

export function printedRecord (mod: ModuleDef, record: ApiRecord): PrintedRecord {
  const withheld = new Set(Array.isArray(record._restringidos) ? record._restringidos as string[] : [])
  const excluded = new Set(mod.printExcluded)
  const fields: PrintedField[] = []
  for (const f of mod.fields) {
    if (excluded.has(f.name) || typeOf(f).writeOnly) continue
    const text = withheld.has(f.name) ? WITHHELD : valueText(record[f.name], f, withheld, f.name)
    fields.push({ label: f.label, value: text === '' ? EMPTY : text })
  }
  return {
    title: mod.label,
    id: record._id as string,
    version: record._version as number,
    created: dateText(String(record._created)),
    modified: dateText(String(record._modified)),
    hash: record._hash as string,
    fields,
  }
}
