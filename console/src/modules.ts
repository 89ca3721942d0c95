/** What GET /me/modulos says of a module (docs/user-guide.md "The modules you may see"), and how the console names things. */

// The shape is the service's own (a type only: nothing of the server enters the bundle).
import type { FieldDescription, ModuleDescription } from '../../core/registry/module-description.js'

/**
 * A field as the console reads it: the service's description, and the
 * labels modules.yaml may give (`etiqueta`, `ayuda`, `etiquetas_valores`;
 * a `formato: euros` amount). Each is optional here: where one is missing
 * the console shows the field's name, so a service that sends none works.
 */
export interface FieldInfo extends Omit<FieldDescription, 'elementos' | 'etiqueta' | 'ayuda' | 'etiquetas_valores'> {
  etiqueta?: string
  /** Help text shown under the field's input. */
  ayuda?: string
  /** An enum value's label, by value. */
  etiquetas_valores?: Record<string, string>
  elementos?: FieldInfo[]
}

export interface ModuleInfo extends Omit<ModuleDescription, 'campos'> {
  campos: FieldInfo[]
}

/** The users module of the default modules.yaml (`users: true`): Administrar usuarios, and no password on its edit form. */
export const USERS_MODULE = 'usuarios'

const SYSTEM: Record<string, string> = {
  _id: 'Referencia',
  _created: 'Creado',
  _created_by: 'Creado por',
  _modified: 'Modificado',
  _modified_by: 'Modificado por',
  _version: 'Versión',
  _deleted: 'Eliminado',
}

/** A name as a heading when nothing labels it: `fecha_hechos` → `Fecha hechos`. */
export function labelOf (name: string): string {
  const system = SYSTEM[name]
  if (system !== undefined) return system
  const words = name.replace(/_/g, ' ').trim()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** A field's label: its `etiqueta`, else its name as a heading. */
export function fieldLabel (f: Pick<FieldInfo, 'nombre' | 'etiqueta'>): string {
  return f.etiqueta ?? labelOf(f.nombre)
}

/** A field of `mod` named `name` (`testigos.dni` names a sub-field). */
export function fieldOf (mod: ModuleInfo, name: string): FieldInfo | undefined {
  const [top, sub] = name.split('.')
  const f = mod.campos.find((c) => c.nombre === top)
  return sub === undefined ? f : f?.elementos?.find((s) => s.nombre === sub)
}

/**
 * The label of a name as the API gives it about `mod`: a field, a sub-field
 * (`testigos.dni`, or `testigos[0].dni` in `detalles`: `Testigo 1: DNI`), a
 * system field.
 */
export function labelIn (mod: ModuleInfo, name: string): string {
  const item = /^([^.[]+)\[(\d+)\]\.(.+)$/.exec(name)
  if (item !== null) {
    const f = mod.campos.find((c) => c.nombre === item[1])
    const sub = f?.elementos?.find((s) => s.nombre === item[3])
    return `${singular(f === undefined ? labelOf(item[1]!) : fieldLabel(f))} ${Number(item[2]) + 1}: ${sub === undefined ? labelOf(item[3]!) : fieldLabel(sub)}`
  }
  const f = fieldOf(mod, name)
  if (f === undefined) return labelOf(name)
  if (!name.includes('.')) return fieldLabel(f)
  return `${fieldLabel(mod.campos.find((c) => c.nombre === name.split('.')[0])!)}: ${fieldLabel(f)}`
}

/** A label inside a sentence (`Archivos adjuntos` → `archivos adjuntos`); an initialism kept (`DNI del titular`). */
export function inSentence (label: string): string {
  return /^\p{Lu}{2}/u.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1)
}

/** An enum value's label (`investigacion` → `En investigación`), else the value. */
export function valueLabel (f: Pick<FieldInfo, 'etiquetas_valores'> | undefined, value: string): string {
  return f?.etiquetas_valores?.[value] ?? value
}

const LINKS = new Set(['de', 'del', 'la', 'las', 'el', 'los', 'en', 'con', 'por', 'para', 'a', 'y', 'o'])

/** One word in the singular: Spanish plurals add -s after a vowel and -es after a consonant. */
function singularWord (w: string): string {
  if (/iones$/i.test(w)) return w.slice(0, -4) + (w.endsWith('S') ? 'ÓN' : 'ón')
  if (/[aeiouáéíóú][rlndj]es$/i.test(w)) return w.slice(0, -2)
  if (/[aeiouáéíóú]ces$/i.test(w)) return w.slice(0, -3) + (w.endsWith('S') ? 'Z' : 'z')
  if (/[aeiouáéíóú]s$/i.test(w)) return w.slice(0, -1)
  return w
}

/**
 * One item of a list named in the plural, for its group's legend
 * (`Testigos` → `Testigo 1`, `Documentos adjuntos` → `Documento adjunto`,
 * `Testigos de los hechos` → `Testigo de los hechos`): the words before
 * the first link word each in the singular.
 */
export function singular (plural: string): string {
  const words = plural.split(' ')
  const stop = words.findIndex((w) => LINKS.has(w.toLowerCase()))
  return words.map((w, i) => stop !== -1 && i >= stop ? w : singularWord(w)).join(' ')
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
