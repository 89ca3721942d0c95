/**
 * What a client learns of modules.yaml at run time (GET /me/modulos,
 * docs/user-guide.md "The modules you may see"): the modules a role may
 * `ver`, each with its fields, states, the role's actions and the fields a
 * list shows first. The console builds its screens from it. Pure.
 */
import type { AccessTable } from '../access.js'
import { formatOf, shapeOf, type FilterKind, type InputHint } from '../field-types/formats/index.js'
import { ACTIONS, type FieldDef, type Registry } from './types.js'

export interface FieldDescription {
  nombre: string
  /** What a person reads (docs/administrator-guide.md "Labels"): the declared label, else the name. */
  etiqueta: string
  ayuda?: string
  tipo: string
  obligatorio: boolean
  cifrado: boolean
  filtrable: boolean
  buscable: boolean
  unico: boolean
  enum?: string[]
  /** With `enum`: every value's label (the value itself where none is declared). */
  etiquetas_valores?: Record<string, string>
  ref?: string
  por_defecto?: string | number | boolean
  min?: number
  max?: number
  min_longitud?: number
  max_longitud?: number
  patron?: string
  formato?: string
  /** With `formato`: how a form's input asks for the value (core/field-types/formats/format.ts InputHint). */
  entrada?: FieldInput
  /** With `formato`: how a list filters it: by the whole value, by a part, or between two bounds. */
  filtro?: 'igual' | 'contiene' | 'rango'
  max_elementos?: number
  descripcion?: string
  elementos?: FieldDescription[]
}

export interface FieldInput {
  /** The HTML input's `type`. */
  tipo: string
  /** Its `inputmode`: the on-screen keyboard. */
  modo?: string
  autocompletar?: string
  /** What is said under the input. */
  indicacion?: string
}

const FILTERS: Readonly<Record<FilterKind, 'igual' | 'contiene' | 'rango'>> = { equals: 'igual', contains: 'contiene', range: 'rango' }

function describeInput (input: InputHint): FieldInput {
  return {
    tipo: input.type,
    ...(input.inputMode !== undefined && { modo: input.inputMode }),
    ...(input.autocomplete !== undefined && { autocompletar: input.autocomplete }),
    ...(input.hint !== undefined && { indicacion: input.hint }),
  }
}

export interface ModuleDescription {
  nombre: string
  ruta: string
  prefijo: string
  etiqueta: string
  descripcion?: string
  ayuda?: string
  /** Each action the role holds on the module: on every record or on its own only. */
  acciones: Record<string, 'todos' | 'propios'>
  campo_estado?: string
  transiciones: Array<{ desde: string, a: string, requiere: string[] }>
  /** The fields a list shows beside `_id`. */
  columnas: string[]
  campos: FieldDescription[]
}

function describeField (f: FieldDef, registry: Registry): FieldDescription {
  const target = f.ref === undefined ? undefined : registry.byName.get(f.ref)?.path
  // The pattern the API checks: a format's own replaces a declared one (core/field-types/text-like.ts), so a form checks the same.
  const patron = shapeOf(f)?.pattern ?? f.pattern
  const format = formatOf(f)
  return {
    nombre: f.name, etiqueta: f.label,
    ...(f.help !== undefined && { ayuda: f.help }),
    tipo: f.type, obligatorio: f.required, cifrado: f.encrypted, filtrable: f.filterable, buscable: f.searchable, unico: f.unique,
    ...(f.enum !== undefined && { enum: [...f.enum] }),
    ...(f.enumLabels !== undefined && { etiquetas_valores: { ...f.enumLabels } }),
    ...(target !== undefined && { ref: target }),
    ...(f.default !== undefined && { por_defecto: f.default }),
    ...(f.min !== undefined && { min: f.min }),
    ...(f.max !== undefined && { max: f.max }),
    ...(f.minLength !== undefined && { min_longitud: f.minLength }),
    ...(f.maxLength !== undefined && { max_longitud: f.maxLength }),
    ...(patron !== undefined && { patron }),
    ...(format !== undefined && { formato: f.format, entrada: describeInput(format.input), filtro: FILTERS[format.filter] }),
    ...(f.maxItems !== undefined && { max_elementos: f.maxItems }),
    ...(f.description !== undefined && { descripcion: f.description }),
    ...(f.items !== undefined && { elementos: f.items.map((i) => describeField(i, registry)) }),
  }
}

export function describeModules (registry: Registry, access: AccessTable, role: string): ModuleDescription[] {
  return registry.modules.filter((m) => access.scope(role, m.name, 'ver') !== 'none').map((m) => {
    const acciones: ModuleDescription['acciones'] = {}
    for (const a of ACTIONS) {
      const scope = access.scope(role, m.name, a)
      if (scope !== 'none') acciones[a] = scope === 'all' ? 'todos' : 'propios'
    }
    return {
      nombre: m.name, ruta: m.path, prefijo: m.prefix, etiqueta: m.label,
      ...(m.description !== undefined && { descripcion: m.description }),
      ...(m.help !== undefined && { ayuda: m.help }),
      acciones,
      ...(m.stateField !== undefined && { campo_estado: m.stateField }),
      transiciones: m.transitions.map((t) => ({ desde: t.from, a: t.to, requiere: [...t.requires] })),
      columnas: [...m.listColumns],
      campos: m.fields.map((f) => describeField(f, registry)),
    }
  })
}
