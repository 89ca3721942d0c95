/** What GET /me/modulos says of a module (docs/user-guide.md "The modules you may see"), and how the console names things. */

// The shape is the service's own (a type only: nothing of the server enters the bundle).
import type { FieldDescription, ModuleDescription } from '../../core/registry/module-description.js'

/**
 * A field's labels from modules.yaml (`etiqueta`, `ayuda`, an enum's
 * `etiquetas_valores`), optional here: where one is missing the console
 * shows the name (`campo.etiqueta ?? labelOf(campo.nombre)`).
 */
interface FieldLabels {
  etiqueta?: string
  ayuda?: string
  etiquetas_valores?: Record<string, string>
}

export type FieldInfo = FieldDescription & FieldLabels
export type ModuleInfo = Omit<ModuleDescription, 'campos'> & { campos: FieldInfo[] }

const SYSTEM: Record<string, string> = {
  _id: 'Referencia',
  _created: 'Creado',
  _created_by: 'Creado por',
  _modified: 'Modificado',
  _modified_by: 'Modificado por',
  _version: 'Versión',
  _deleted: 'Eliminado',
}

/** A field's name as a heading: `fecha_hechos` → `Fecha hechos` (modules.yaml gives fields no label). */
export function labelOf (name: string): string {
  const system = SYSTEM[name]
  if (system !== undefined) return system
  const words = name.replace(/_/g, ' ').trim()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** A value as text, as the API gives it. */
export function show (value: unknown): string {
  if (value === null || value === undefined || value === '') return '—'
  if (typeof value === 'boolean') return value ? 'Sí' : 'No'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/**
 * How a record is named where it is referred to (a related record, a ref
 * picker's choice): its module's first short text columns, not choices
 * (`Pedro Sanz Ruiz`, `1234-ABC Seat`); its `_id` when it has none.
 */
export function nameFields (mod: ModuleInfo): string[] {
  const text = new Set(mod.campos.filter((f) => f.tipo === 'string' && f.enum === undefined && !f.cifrado && f.nombre !== mod.campo_estado).map((f) => f.nombre))
  return mod.columnas.filter((c) => text.has(c)).slice(0, 3)
}

export function nameOf (mod: ModuleInfo, record: Record<string, unknown>): string {
  const name = nameFields(mod).map((f) => record[f]).filter((v) => typeof v === 'string' && v !== '').join(' ')
  return name === '' ? String(record._id) : name
}
