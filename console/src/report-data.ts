/**
 * What a report (docs/user-guide.md "Console", `Informes`) asks of GET
 * /{module}/resumen and how it shows the answer: the keys a module may be
 * grouped by (filterable, not encrypted, not text; a date by day, week,
 * month or year), the numeric fields it may sum, the group values in
 * Spanish, and the table as a CSV for a spreadsheet set to Spanish (`;`,
 * decimal comma, a byte-order mark).
 */
import { labelOf, type FieldInfo, type ModuleInfo } from './modules.js'

export const INTERVALS = { dia: 'día', semana: 'semana', mes: 'mes', año: 'año' } as const
export type Interval = keyof typeof INTERVALS
export const NONE = '(sin valor)'

/** A key a report may group by: a field, and whether it takes an interval (a date). */
export interface KeyField { nombre: string, etiqueta: string, fecha: boolean, campo?: FieldInfo }

const KEY_TYPES = new Set(['string', 'integer', 'decimal', 'boolean', 'time', 'ref', 'date', 'datetime'])
const DATED = new Set(['date', 'datetime'])

/** The API's keys (docs/user-guide.md "Summaries (resumen)"): declared fields, then the creation date and its author. */
export function keyFields (mod: ModuleInfo): KeyField[] {
  const declared = mod.campos.filter((f) => f.filtrable && !f.cifrado && KEY_TYPES.has(f.tipo))
    .map((f) => ({ nombre: f.nombre, etiqueta: fieldLabel(f), fecha: DATED.has(f.tipo), campo: f }))
  return [...declared, { nombre: '_created', etiqueta: labelOf('_created'), fecha: true }, { nombre: '_created_by', etiqueta: labelOf('_created_by'), fecha: false }]
}

/** The fields a report may sum. */
export function numberFields (mod: ModuleInfo): FieldInfo[] {
  return mod.campos.filter((f) => f.filtrable && !f.cifrado && (f.tipo === 'integer' || f.tipo === 'decimal'))
}

export function fieldLabel (f: FieldInfo): string {
  return f.etiqueta ?? labelOf(f.nombre)
}

/** What the address asks for, checked against the module (anything unknown falls back to the default). */
export interface ReportSpec {
  keys: KeyField[]
  interval: Interval
  sums: FieldInfo[]
  /** `cantidad` or a field of `sums`: what the chart draws. */
  chart: string
}

export function reportSpec (mod: ModuleInfo, params: URLSearchParams): ReportSpec {
  const keys = keyFields(mod)
  const find = (name: string | null): KeyField | undefined => keys.find((k) => k.nombre === name)
  const first = find(params.get('_por')) ?? find(mod.campo_estado ?? null) ?? keys[0]!
  const second = find(params.get('_y'))
  const interval = params.get('_intervalo') ?? ''
  const asked = new Set((params.get('_sumar') ?? '').split(','))
  const sums = numberFields(mod).filter((f) => asked.has(f.nombre))
  const chart = params.get('_grafico') ?? ''
  return {
    keys: second === undefined || second.nombre === first.nombre ? [first] : [first, second],
    interval: interval in INTERVALS ? interval as Interval : 'mes',
    sums,
    chart: sums.some((f) => f.nombre === chart) ? chart : 'cantidad',
  }
}

/** A key as `agrupar` names it, and so its group's property (`fecha_hechos:mes`). */
export function keyName (k: KeyField, interval: Interval): string {
  return k.fecha ? `${k.nombre}:${interval}` : k.nombre
}

export function keyHeading (k: KeyField, interval: Interval): string {
  return k.fecha ? `${k.etiqueta} (${INTERVALS[interval]})` : k.etiqueta
}

/** GET /{module}/resumen's query: the keys, the sums, the groups in the keys' order, and the list's filters and search. */
export function summaryQuery (spec: ReportSpec, selection: Array<[string, string]>): URLSearchParams {
  const keys = spec.keys.map((k) => keyName(k, spec.interval)).join(',')
  const query = new URLSearchParams({ agrupar: keys, sort: keys, limit: '1000' })
  if (spec.sums.length > 0) query.set('medidas', spec.sums.map((f) => `suma:${f.nombre}`).join(','))
  for (const [name, value] of selection) query.append(name, value)
  return query
}

const MONTHS = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre']

/** A group's key as a person of the force reads it: a date bucket in Spanish, an enum value by its label. */
export function showKey (k: KeyField, interval: Interval, value: unknown): string {
  if (value === null || value === undefined || value === '') return NONE
  const text = String(value)
  if (k.fecha) {
    const m = /^(\d{4})(?:-(W)?(\d{2})(?:-(\d{2}))?)?$/.exec(text)
    if (m === null) return text
    const [, year, week, mid, day] = m
    if (interval === 'dia' && day !== undefined) return `${day}/${mid}/${year}`
    if (interval === 'semana' && week !== undefined) return `Semana ${Number(mid)} de ${year}`
    if (interval === 'mes' && mid !== undefined) return `${MONTHS[Number(mid) - 1] ?? mid} de ${year}`
    return text
  }
  if (typeof value === 'boolean') return value ? 'Sí' : 'No'
  if (typeof value === 'number') return number(value)
  return k.campo?.etiquetas_valores?.[text] ?? text
}

const NUMBER = new Intl.NumberFormat('es-ES', { maximumFractionDigits: 2 })
const EUROS = new Intl.NumberFormat('es-ES', { minimumFractionDigits: 2, maximumFractionDigits: 2 })

export function number (value: number): string {
  return NUMBER.format(value)
}

/** A sum as shown: `200,50 €` for a field declared `formato: euros`. */
export function showSum (f: FieldInfo, value: unknown): string {
  if (typeof value !== 'number') return '—'
  return f.formato === 'euros' ? `${EUROS.format(value)}\u00a0€` : number(value)
}

/** A table (headings, then rows of cells) as CSV: `;`, CRLF, quotes where needed, a formula-like text made inert with `'` as the export does. */
export function toCsv (rows: Array<Array<string | number>>): string {
  const cell = (v: string | number): string => {
    // A number with a decimal comma and no grouping: a spreadsheet set to Spanish reads it as a number.
    if (typeof v === 'number') return String(v).replace('.', ',')
    const text = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v
    return /[;"\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
  }
  return `\uFEFF${rows.map((r) => r.map(cell).join(';')).join('\r\n')}\r\n`
}
