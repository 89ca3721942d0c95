/**
 * A generated form's values (docs/user-guide.md "Console"): a record's fields as the
 * inputs hold them (dates `dd/mm/aaaa`, numbers `200,50`: console/src/spanish.ts)
 * and back as the API takes them, and the checks GET /me/modulos states
 * (required, lengths, `patron`, `enum`, limits), with the API's own words
 * (http/validation-errors.ts), so a form refuses in the browser what a
 * field's rules say. A check no rule states (a DNI's letter) is never
 * repeated here: the API's 400 names the field. Pure.
 */
import { USERS_MODULE, valueLabel, type FieldInfo, type ModuleInfo } from './modules.js'
import { dateInput, dateTimeInput, numberInput, numberKind, parseDate, parseDateTime, parseNumber, parseTime, type Parsed } from './spanish.js'

export type Item = Record<string, string | boolean>
export type FormValue = string | boolean | Item[]
export type Values = Record<string, FormValue>

/**
 * Files enter only by upload (docs/user-guide.md "Evidence files"); a module with declared moves changes
 * state by its buttons, and starts at its default; a user's password is
 * asked for only when the user is created (`Restablecer contraseña` in
 * Administrar usuarios sets a new one).
 */
export function formFields (mod: ModuleInfo, editing = false): FieldInfo[] {
  return mod.campos.filter((f) => f.tipo !== 'file' && !(f.nombre === mod.campo_estado && mod.transiciones.length > 0) &&
    !(editing && f.tipo === 'password' && mod.nombre === USERS_MODULE))
}

function scalarIn (f: FieldInfo, v: unknown): string | boolean {
  if (f.tipo === 'boolean') return v === true
  if (v === null || v === undefined) return ''
  if (typeof v === 'number' && (f.tipo === 'integer' || f.tipo === 'decimal')) return numberInput(v, numberKind(f))
  if (f.tipo === 'date' && typeof v === 'string') return dateInput(v)
  if (f.tipo === 'datetime' && typeof v === 'string') return dateTimeInput(v)
  return typeof v === 'object' ? JSON.stringify(v) : String(v)
}

/** What an input of a typed field holds, read as the API takes it; other fields have no reading of their own. */
function parsed (f: FieldInfo, v: string): Parsed<string | number> | undefined {
  switch (f.tipo) {
    case 'integer': return parseNumber(v, 0)
    case 'decimal': return parseNumber(v, 2)
    case 'date': return parseDate(v)
    case 'datetime': return parseDateTime(v)
    case 'time': return parseTime(v)
    default: return undefined
  }
}

/** A field of a record as its input holds it. */
export function toInput (f: FieldInfo, v: unknown): FormValue {
  if (f.tipo !== 'array') return scalarIn(f, v)
  const list = Array.isArray(v) ? v as unknown[] : []
  if (f.elementos === undefined) return list.map((x) => typeof x === 'string' ? x : JSON.stringify(x)).join('\n')
  return list.map((item) => Object.fromEntries(f.elementos!.map((s) => [s.nombre, scalarIn(s, (item as Record<string, unknown>)[s.nombre])])))
}

export function initialValues (mod: ModuleInfo, record?: Record<string, unknown>): Values {
  return Object.fromEntries(formFields(mod, record !== undefined).map((f) => [f.nombre, toInput(f, record === undefined ? (f.por_defecto === 'now' ? undefined : f.por_defecto) : record[f.nombre])]))
}

function scalarOut (f: FieldInfo, v: string | boolean): unknown {
  if (typeof v === 'boolean') return v
  if (v.trim() === '') return null
  const p = parsed(f, v)
  // Unreadable (the form checks first): sent as typed, for the API to refuse.
  if (p !== undefined) return 'value' in p ? p.value : v
  return v
}

/** A field's input as the API takes it: null when empty. */
export function fromInput (f: FieldInfo, v: FormValue): unknown {
  if (Array.isArray(v)) return v.map((item) => Object.fromEntries(f.elementos!.flatMap((s) => { const x = scalarOut(s, item[s.nombre] ?? ''); return x === null ? [] : [[s.nombre, x]] })))
  if (f.tipo === 'array') return typeof v === 'string' ? v.split('\n').map((l) => l.trim()).filter((l) => l !== '') : []
  return scalarOut(f, v)
}

/** The request's body: a create sends what was filled in; an edit only what changed from `original` (restricted fields never). */
export function bodyOf (mod: ModuleInfo, values: Values, original: Values | undefined, restricted: Set<string>): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const f of formFields(mod, original !== undefined)) {
    const v = values[f.nombre]
    if (v === undefined || restricted.has(f.nombre)) continue
    if (original !== undefined && JSON.stringify(v) === JSON.stringify(original[f.nombre])) continue
    // A password left empty keeps the one set.
    if (f.tipo === 'password' && v === '') continue
    const out = fromInput(f, v)
    if (original === undefined && (out === null || (Array.isArray(out) && out.length === 0))) continue
    body[f.nombre] = out
  }
  return body
}

/** Required as the API checks it: a create fills a field left out with its default (records/normalize.ts). */
export function requiredNow (f: FieldInfo, editing: boolean): boolean {
  return f.obligatorio && (editing || f.por_defecto === undefined)
}

function scalarProblem (f: FieldInfo, v: string | boolean, refPrefix?: string, required = f.obligatorio): string | undefined {
  if (typeof v === 'boolean') return undefined
  if (v.trim() === '') return required ? 'es obligatorio' : undefined
  const p = parsed(f, v)
  if (p !== undefined && 'problem' in p) return p.problem
  if (p !== undefined && typeof p.value === 'number') {
    if (f.min !== undefined && p.value < f.min) return `debe ser como mínimo ${numberInput(f.min, numberKind(f))}`
    if (f.max !== undefined && p.value > f.max) return `debe ser como máximo ${numberInput(f.max, numberKind(f))}`
    return undefined
  }
  if (p !== undefined) return undefined
  const length = [...v].length
  if (f.max_longitud !== undefined && length > f.max_longitud) return `admite como máximo ${f.max_longitud} caracteres`
  if (f.min_longitud !== undefined && length < f.min_longitud) return `necesita al menos ${f.min_longitud} caracteres`
  if (f.enum !== undefined && !f.enum.includes(v)) return `debe ser uno de: ${f.enum.map((e) => valueLabel(f, e)).join(', ')}`
  const pattern = f.tipo === 'ref' && refPrefix !== undefined ? `^${refPrefix}-\\d{4}-\\d{5,}$` : f.patron
  if (pattern !== undefined && !new RegExp(pattern, 'u').test(v)) return 'no tiene el formato esperado'
  // What no pattern says (a DNI's letter) the API's `detalles` say, beside the field.
  return undefined
}

/** Every problem of the form, keyed as the API's `detalles` name fields (`testigos[0].nombre`). */
export function problems (mod: ModuleInfo, values: Values, modules: ModuleInfo[], restricted: Set<string>, editing: boolean): Map<string, string> {
  const out = new Map<string, string>()
  for (const f of formFields(mod, editing)) {
    const v = values[f.nombre]
    if (v === undefined || restricted.has(f.nombre)) continue
    if (Array.isArray(v)) {
      if (f.max_elementos !== undefined && v.length > f.max_elementos) out.set(f.nombre, `admite como máximo ${f.max_elementos} elementos`)
      v.forEach((item, i) => {
        for (const s of f.elementos ?? []) {
          const p = scalarProblem(s, item[s.nombre] ?? '')
          if (p !== undefined) out.set(`${f.nombre}[${i}].${s.nombre}`, p)
        }
      })
      continue
    }
    if (f.tipo === 'array') {
      if (f.obligatorio && String(v).trim() === '') out.set(f.nombre, 'es obligatorio')
      continue
    }
    // An empty password on an edit keeps the stored one.
    if (editing && f.tipo === 'password' && v === '') continue
    const p = scalarProblem(f, v, modules.find((m) => m.ruta === f.ref)?.prefijo, requiredNow(f, editing))
    if (p !== undefined) out.set(f.nombre, p)
  }
  return out
}
