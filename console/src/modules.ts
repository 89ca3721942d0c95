/** What GET /me/modulos says of a module (docs/user-guide.md "The modules you may see"), and how the console names things. */

// The shape is the service's own (a type only: nothing of the server enters the bundle).
export type { FieldDescription as FieldInfo, ModuleDescription as ModuleInfo } from '../../core/registry/module-description.js'

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
