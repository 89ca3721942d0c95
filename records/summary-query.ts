/**
 * Parses a summary's own parameters (docs/user-guide.md "Summaries (resumen)"):
 * `agrupar` (up to 3 keys, a date or date-time with its bucket), `medidas`
 * (`suma`, `media`, `min`, `max` of a field), `sort` (on `cantidad`, a key
 * or a measure) and `limit` (groups, as a list's). The rest of the query is
 * the list's filters, handed back for records/list-query.ts. Pure: anything
 * it does not understand is a 400 naming the parameter.
 */
import { invalid } from '../core/errors.js'
import type { FieldType, ModuleDef } from '../core/registry/types.js'
import { apiHint } from '../core/registry/suggest.js'
import { SYSTEM_FIELDS } from '../core/system-fields.js'
import { valueColumn } from '../db/columns.js'
import { parsePage, single } from './list-query.js'

type RawQuery = Record<string, string | string[] | undefined>

/** The parameters a summary reads itself; `offset` has no meaning for groups. */
export const SUMMARY_PARAMETERS = ['agrupar', 'medidas', 'sort', 'limit'] as const

export const BUCKETS = ['dia', 'semana', 'mes', 'año', 'hora'] as const
export type Bucket = typeof BUCKETS[number]

export const MEASURES = ['suma', 'media', 'min', 'max'] as const
export type MeasureName = typeof MEASURES[number]

export const MAX_KEYS = 3

/** Field types a key may be: a value shown as it is (date and date-time only by a bucket). */
const KEY_TYPES: ReadonlySet<FieldType> = new Set(['string', 'integer', 'decimal', 'boolean', 'time', 'ref', 'date', 'datetime'])
const DATED: ReadonlySet<FieldType> = new Set(['date', 'datetime'])
const NUMERIC: ReadonlySet<FieldType> = new Set(['integer', 'decimal'])

/** A field a summary may name: its name, column and type. */
export interface SummaryField {
  readonly name: string
  readonly column: string
  readonly type: FieldType
}

export interface SummaryKey {
  /** As written in `agrupar` (`fecha_hechos:mes`): the group's property. */
  readonly name: string
  readonly field: SummaryField
  readonly bucket?: Bucket
}

export interface SummaryMeasure {
  /** As written in `medidas` (`suma:importe`): the group's property. */
  readonly name: string
  readonly measure: MeasureName
  readonly field: SummaryField
}

export interface SummaryOrder {
  /** `cantidad`, a key's or a measure's name. */
  readonly name: string
  readonly desc: boolean
}

export interface SummaryQuery {
  readonly keys: readonly SummaryKey[]
  readonly measures: readonly SummaryMeasure[]
  /** The order asked for; the records layer completes it so that ties fall the same way every time. */
  readonly order: readonly SummaryOrder[]
  readonly limit: number
}

/**
 * The fields a summary may name: the declared ones that are filterable and
 * not encrypted (an encrypted value is ciphertext; a text or an array is no
 * category), and the filterable system fields but `_id` (one group per record).
 */
function summaryFields (mod: ModuleDef): Map<string, SummaryField> {
  const out = new Map<string, SummaryField>()
  for (const s of SYSTEM_FIELDS) if (s.filterable && s.name !== '_id') out.set(s.name, { name: s.name, column: s.name, type: s.type })
  for (const f of mod.fields) if (f.filterable && !f.encrypted) out.set(f.name, { name: f.name, column: valueColumn(f), type: f.type })
  return out
}

/** The field `name` names, for what `param` does with it; else a 400 with the nearest name. */
function fieldOf (mod: ModuleDef, fields: Map<string, SummaryField>, param: string, name: string): SummaryField {
  const f = fields.get(name)
  if (f !== undefined) return f
  const declared = mod.fieldMap.get(name)
  if (declared?.encrypted === true) throw invalid(param, `"${name}" es un campo cifrado: no se puede agrupar ni medir`)
  if (declared !== undefined) throw invalid(param, `"${name}" no se puede agrupar ni medir`)
  throw invalid(param, `campo desconocido "${name}"${apiHint(name, fields.keys())}`)
}

function items (param: string, raw: string | string[] | undefined): string[] {
  if (raw === undefined) return []
  const text = single(param, raw)
  const parts = text.split(',')
  if (parts.some((p) => p === '')) throw invalid(param, 'contiene un elemento vacío')
  if (new Set(parts).size !== parts.length) throw invalid(param, 'repite un elemento')
  return parts
}

function parseKey (mod: ModuleDef, fields: Map<string, SummaryField>, item: string): SummaryKey {
  const [name, bucket, ...more] = item.split(':')
  if (more.length > 0) throw invalid('agrupar', `"${item}" tiene más de un intervalo`)
  // A group's count is `cantidad`: a key of that name would hide it.
  if (item === 'cantidad') throw invalid('agrupar', '"cantidad" es el número de registros de cada grupo: no puede ser una clave')
  const field = fieldOf(mod, fields, 'agrupar', name!)
  if (!KEY_TYPES.has(field.type)) throw invalid('agrupar', `no se puede agrupar por "${name}" (${field.type})`)
  if (!DATED.has(field.type)) {
    if (bucket !== undefined) throw invalid('agrupar', `"${name}" no es una fecha: no admite el intervalo ":${bucket}"`)
    return { name: item, field }
  }
  if (bucket === undefined) throw invalid('agrupar', `"${name}" es una fecha: indique un intervalo (${BUCKETS.map((b) => `${name}:${b}`).join(', ')})`)
  if (!(BUCKETS as readonly string[]).includes(bucket)) throw invalid('agrupar', `intervalo desconocido ":${bucket}"${apiHint(bucket, BUCKETS)}; use ${BUCKETS.join(', ')}`)
  if (bucket === 'hora' && field.type === 'date') throw invalid('agrupar', `"${name}" es una fecha sin hora: no admite ":hora"`)
  return { name: item, field, bucket: bucket as Bucket }
}

function parseMeasure (mod: ModuleDef, fields: Map<string, SummaryField>, item: string): SummaryMeasure {
  const colon = item.indexOf(':')
  if (colon === -1) throw invalid('medidas', `"${item}" debe ser medida:campo (${MEASURES.join(', ')})`)
  const measure = item.slice(0, colon)
  const name = item.slice(colon + 1)
  if (!(MEASURES as readonly string[]).includes(measure)) throw invalid('medidas', `medida desconocida "${measure}"${apiHint(measure, MEASURES)}; use ${MEASURES.join(', ')}`)
  const field = fieldOf(mod, fields, 'medidas', name)
  const fits = NUMERIC.has(field.type) || (DATED.has(field.type) && (measure === 'min' || measure === 'max'))
  if (!fits) {
    const what = DATED.has(field.type) ? 'de una fecha solo se calculan min y max' : 'solo se mide un número (integer, decimal) o, con min y max, una fecha'
    throw invalid('medidas', `"${item}": ${what}`)
  }
  return { name: item, measure: measure as MeasureName, field }
}

function parseOrder (raw: string | string[] | undefined, names: readonly string[]): SummaryOrder[] {
  return items('sort', raw).map((part) => {
    const desc = part.startsWith('-')
    const name = desc ? part.slice(1) : part
    if (!names.includes(name)) throw invalid('sort', `no se puede ordenar por "${name}"${apiHint(name, names)}; use cantidad, una clave de agrupar o una de medidas`)
    return { name, desc }
  })
}

/** The summary's parameters and the rest of the query (the list's filters, `q`, `incluir_eliminados`). */
export function parseSummaryQuery (mod: ModuleDef, query: RawQuery): { summary: SummaryQuery, rest: RawQuery } {
  const rest: RawQuery = {}
  for (const [key, value] of Object.entries(query)) {
    if (!(SUMMARY_PARAMETERS as readonly string[]).includes(key)) rest[key] = value
  }
  if (rest.offset !== undefined) throw invalid('offset', 'un resumen no se pagina: use limit')
  const fields = summaryFields(mod)
  const keyItems = items('agrupar', query.agrupar)
  if (keyItems.length > MAX_KEYS) throw invalid('agrupar', `admite como máximo ${MAX_KEYS} claves`)
  const keys = keyItems.map((item) => parseKey(mod, fields, item))
  const measures = items('medidas', query.medidas).map((item) => parseMeasure(mod, fields, item))
  const order = parseOrder(query.sort, ['cantidad', ...keyItems, ...measures.map((m) => m.name)])
  const { limit } = parsePage({ limit: query.limit })
  return { summary: { keys, measures, order, limit }, rest }
}

/** What `agrupar` and `medidas` take on `mod`, for the OpenAPI document (generate/operations/summary.ts). */
export interface SummaryVocabulary {
  /** Fields grouped by their value. */
  readonly plain: string[]
  /** Date-time fields (every bucket). */
  readonly instants: string[]
  /** Date fields (every bucket but `hora`). */
  readonly days: string[]
  /** Integer and decimal fields (every measure). */
  readonly numbers: string[]
}

export function summaryVocabulary (mod: ModuleDef): SummaryVocabulary {
  const fields = [...summaryFields(mod).values()]
  const of = (test: (t: FieldType) => boolean): string[] => fields.filter((f) => test(f.type)).map((f) => f.name)
  return {
    plain: of((t) => KEY_TYPES.has(t) && !DATED.has(t)),
    instants: of((t) => t === 'datetime'),
    days: of((t) => t === 'date'),
    numbers: of((t) => NUMERIC.has(t)),
  }
}
