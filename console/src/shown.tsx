/**
 * A value as the console shows it (docs/user-guide.md "Console"): by its
 * field's type in Spanish formats (console/src/spanish.ts), a choice by
 * its label, a person by name (console/src/people.tsx), a withheld one
 * `Restringido`. Lists, records, history, dashboards and the board all
 * show values through here.
 */
import { valueLabel, type FieldInfo } from './modules.js'
import { Person } from './people.js'
import { dateText, dateTimeText, numberKind, numberText } from './spanish.js'

export const EMPTY = '—'

/** A value as text, by its field (none: as the API gives it). */
export function valueText (f: FieldInfo | undefined, value: unknown): string {
  if (value === null || value === undefined || value === '') return EMPTY
  if (typeof value === 'boolean') return value ? 'Sí' : 'No'
  if (typeof value === 'number') return numberText(value, numberKind(f))
  if (Array.isArray(value)) return value.length === 0 ? EMPTY : value.map((v) => valueText(f === undefined ? undefined : { ...f, tipo: 'string' }, v)).join(', ')
  if (typeof value === 'object') return JSON.stringify(value)
  const text = String(value)
  if (f?.tipo === 'date') return dateText(text)
  if (f?.tipo === 'datetime') return dateTimeText(text)
  if (f?.enum !== undefined) return valueLabel(f, text)
  return text
}

/** `_created`, `_created_by` …: dates in Spanish, people by name. */
export function SystemValue ({ name, value }: { name: string, value: unknown }) {
  if ((name === '_created_by' || name === '_modified_by') && typeof value === 'string') return <Person id={value} />
  if (name === '_created' || name === '_modified' || name === '_deleted') return <>{typeof value === 'string' ? dateTimeText(value) : valueText(undefined, value)}</>
  return <>{valueText(undefined, value)}</>
}

/** A field's value; a reference by the name of the person it names (a reference to no person: its id). */
export function Shown ({ field, value }: { field: FieldInfo | undefined, value: unknown }) {
  if (field?.tipo === 'ref' && typeof value === 'string' && value !== '') return <Person id={value} />
  return <>{valueText(field, value)}</>
}

export function Restricted () {
  return <span class="restricted" title="Dato cifrado que su rol no puede ver">Restringido</span>
}
