/**
 * Parses a list request's query string (docs/user-guide.md "Listing") into a filter (db/where-sql.ts; with its any-of groups, records/any-of-query.ts),
 * search conditions (records/search-query.ts), an order and a page. Pure: unit-tested alone. Anything it does not
 * understand is a 400 naming the parameter; it never passes client text
 * into SQL other than as a bound value.
 */
import { AppError, invalid } from '../core/errors.js'
import type { FieldCipher } from '../core/crypto.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { apiHint } from '../core/registry/suggest.js'
import { SYSTEM_FIELDS, systemField } from '../core/system-fields.js'
import { isCleanText } from '../core/text.js'
import { blindIndexColumn, valueColumn } from '../db/columns.js'
import { and } from './scope.js'
import { FIELD_TYPES_IMPL, FILTER_OPERATORS, operatorsOf, Rejected, typeOf, type FilterOperator } from '../core/field-types/index.js'
import { filterText } from '../core/field-types/formats/index.js'
import type { SqlCondition } from '../db/search-sql.js'
import { containsSearch, emptyFlag, emptySearch, textSearch, type Condition } from './search-query.js'
import { anyOfConditions, isAnyOfKey, type FilterReader } from './any-of-query.js'

export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 1000
const RESERVED = ['limit', 'offset', 'sort', 'incluir_eliminados', 'q']

/** What a filter or sort names: its column, the operators it takes and how its values are read. */
interface Target {
  column: string
  operators: readonly FilterOperator[]
  value: (text: string, timeZone: string, cipher: FieldCipher) => unknown
  /** An encrypted field, compared through its blind index. */
  blind: boolean
  /** The declared field (none for a system field). */
  field?: FieldDef
  /** Its module, for a blind target (each field has its own index key). */
  module?: string
}

/** System fields that may be filtered and sorted on, in their order (also the order of hints). */
const SYSTEM_TARGETS = SYSTEM_FIELDS.filter((s) => s.filterable).map((s) => s.name)


export interface ListQuery {
  where: Record<string, unknown>
  /** Conditions in SQL (search), ANDed with `where` by the record service. */
  search: SqlCondition[]
  /** With `q` and no `sort`: the relevance, ordered first (highest first). */
  rank?: SqlCondition
  orderBy: Array<Record<string, 'asc' | 'desc'>>
  limit: number
  offset: number
  includeDeleted: boolean
  /** Filters on encrypted fields were used (caller needs `descifrar`). */
  filtersEncrypted: boolean
  /** The encrypted fields filtered on, each once (the read log's `busqueda`; never the values). */
  encryptedFields: string[]
}

type RawQuery = Record<string, string | string[] | undefined>

/** A filterable system field; own names only (`__proto__`, `toString` … are unknown parameters). */
function systemTarget (name: string): Target | undefined {
  const sys = systemField(name)
  if (sys === undefined || !sys.filterable) return undefined
  const type = FIELD_TYPES_IMPL[sys.type]
  return { column: sys.name, operators: type.operators, value: (text, timeZone) => type.filterValue(text, timeZone), blind: false }
}

function targetOf (mod: ModuleDef, name: string, key = name): Target | undefined {
  const sys = systemTarget(name)
  if (sys !== undefined) return sys
  const f = mod.fieldMap.get(name)
  if (f === undefined) return undefined
  const operators = operatorsOf(f)
  if (operators.length === 0) throw invalid(key, f.encrypted ? 'no se puede filtrar por un campo cifrado no buscable' : 'no se puede filtrar por este campo')
  // A searchable encrypted field is compared by the blind index of the text sent.
  // A value is compared in the form its format stores (`600 11 22 33` as `+34600112233`).
  if (f.encrypted) return { column: blindIndexColumn(f), operators, value: (text, _timeZone, cipher) => cipher.blindIndex(mod.name, f.name, filterText(f, text)), blind: true, field: f, module: mod.name }
  const type = typeOf(f)
  return { column: valueColumn(f), operators, value: (text, timeZone) => type.filterValue(filterText(f, text), timeZone), blind: false, field: f }
}

export function single (key: string, v: string | string[]): string {
  if (Array.isArray(v)) {
    if (v.length !== 1) throw invalid(key, 'no admite varios valores')
    return v[0]!
  }
  return v
}

function value (t: Target, key: string, text: string, timeZone: string, cipher: FieldCipher): unknown {
  if (!isCleanText(text)) throw invalid(key, 'contiene caracteres de control o texto mal formado')
  const v = t.value(text, timeZone, cipher)
  if (v instanceof Rejected) throw invalid(key, v.mensaje)
  return v
}

function condition (t: Target, op: FilterOperator, key: string, raw: string | string[], timeZone: string, cipher: FieldCipher): Condition {
  if (op === 'vacio') return emptySearch(t.column, t.field, emptyFlag(key, single(key, raw)), cipher, t.module)
  if (op === 'contiene') return containsSearch(t.column, t.field, value(t, key, single(key, raw), timeZone, cipher) as string)
  return { where: comparison(t, op, key, raw, timeZone, cipher) }
}

function comparison (t: Target, op: FilterOperator, key: string, raw: string | string[], timeZone: string, cipher: FieldCipher): Record<string, unknown> {
  const one = (text: string): unknown => value(t, key, text, timeZone, cipher)
  const many = (texts: string[]): unknown[] => {
    if (texts.length > 100) throw invalid(key, 'admite como máximo 100 valores')
    return texts.map(one)
  }
  switch (op) {
    case 'eq': return Array.isArray(raw) ? { [t.column]: { $in: many(raw) } } : { [t.column]: one(raw) }
    // "Not equal" includes records where the field is empty (SQL's <> alone would drop them).
    case 'ne': return { $or: [Array.isArray(raw) ? { [t.column]: { $nin: many(raw) } } : { [t.column]: { $ne: one(raw) } }, { [t.column]: null }] }
    case 'in': return { [t.column]: { $in: many(single(key, raw).split(',')) } }
    default: return { [t.column]: { [`$${op}`]: one(single(key, raw)) } }
  }
}

function intParam (raw: string | string[] | undefined, key: string, fallback: number, min: number): number {
  if (raw === undefined) return fallback
  const text = single(key, raw)
  if (!/^\d{1,15}$/.test(text) || Number(text) < min) throw invalid(key, `debe ser un número entero mayor o igual que ${min}`)
  return Number(text)
}

/** `limit` (default 100, clamped to 1000) and `offset` (default 0) of any list (docs/user-guide.md "Listing"). */
export function parsePage (query: RawQuery): { limit: number, offset: number } {
  const limit = Math.min(intParam(query.limit, 'limit', DEFAULT_LIMIT, 1), MAX_LIMIT)
  const offset = intParam(query.offset, 'offset', 0, 0)
  if (offset > 2_147_483_647) throw new AppError('DATOS_INVALIDOS', [{ campo: 'offset', mensaje: 'es demasiado grande' }])
  return { limit, offset }
}

function parseSort (mod: ModuleDef, raw: string | string[] | undefined): Array<Record<string, 'asc' | 'desc'>> {
  const spec = raw === undefined ? '-_created' : single('sort', raw)
  const order: Array<Record<string, 'asc' | 'desc'>> = []
  for (const part of spec.split(',')) {
    const desc = part.startsWith('-')
    const name = desc ? part.slice(1) : part
    const sys = systemTarget(name)
    const f = mod.fieldMap.get(name)
    const column = sys?.column ?? (f !== undefined && f.filterable && !f.encrypted ? valueColumn(f) : undefined)
    if (column === undefined) throw invalid('sort', `no se puede ordenar por "${name}"${apiHint(name, sortable(mod))}`)
    order.push({ [column]: desc ? 'desc' : 'asc' })
  }
  if (!order.some((o) => '_id' in o)) order.push({ _id: Object.values(order[0]!)[0]! })
  return order
}

/** The fields `sort` takes (the OpenAPI document names them too). */
export function sortable (mod: ModuleDef): string[] {
  return [...SYSTEM_TARGETS, ...mod.fields.filter((f) => f.filterable && !f.encrypted).map((f) => f.name)]
}

export function parseListQuery (mod: ModuleDef, query: RawQuery, timeZone: string, cipher: FieldCipher): ListQuery {
  const conditions: Array<Record<string, unknown>> = []
  const search: SqlCondition[] = []
  let filtersEncrypted = false
  const encryptedFields: string[] = []
  // Filter `name[op]` sent as `key`; undefined for a name that is no filter. The any-of groups read theirs with it too.
  const filter: FilterReader = (key, name, op, raw) => {
    // A field that takes no filter: a plain filter names the field (as ever), a group's the parameter as sent.
    const target = targetOf(mod, name, isAnyOfKey(key) ? key : name)
    if (target === undefined) return undefined
    if (!(FILTER_OPERATORS as readonly string[]).includes(op)) throw invalid(key, `operador desconocido "${op}"${apiHint(op, FILTER_OPERATORS)}; use ${FILTER_OPERATORS.join(', ')}`)
    if (!target.operators.includes(op as FilterOperator)) throw invalid(key, `el operador "${op}" no se aplica a este campo`)
    if (target.blind) {
      filtersEncrypted = true
      if (!encryptedFields.includes(target.field!.name)) encryptedFields.push(target.field!.name)
    }
    return condition(target, op as FilterOperator, key, raw, timeZone, cipher)
  }
  const names = (): string[] => [...SYSTEM_TARGETS, ...mod.fields.map((f) => f.name)]
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined || RESERVED.includes(key) || isAnyOfKey(key)) continue
    const m = /^([^[\]]+)(?:\[([a-z]+)\])?$/.exec(key)
    const name = m?.[1]
    const c = name === undefined ? undefined : filter(key, name, m?.[2] ?? 'eq', raw)
    if (c === undefined) throw invalid(key, `parámetro desconocido${apiHint(name ?? key, [...RESERVED, ...names()])}`)
    if ('sql' in c) search.push(c.sql)
    else conditions.push(c.where)
  }
  conditions.push(...anyOfConditions(query, filter, names))
  const text = query.q === undefined ? undefined : textSearch(mod, single('q', query.q))
  if (text !== undefined) search.push(text.match)
  const incl = query.incluir_eliminados === undefined ? 'false' : single('incluir_eliminados', query.incluir_eliminados)
  if (incl !== 'true' && incl !== 'false') throw invalid('incluir_eliminados', 'debe ser true o false')
  const includeDeleted = incl === 'true'
  // With deleted records too, said so that a filter is still served by an
  // index: the live rows' one and the deleted rows' one (db/record-indexes.ts).
  conditions.push(includeDeleted ? { $or: [{ _deleted: null }, { _deleted: { $ne: null } }] } : { _deleted: null })
  const { limit, offset } = parsePage(query)
  return {
    where: and(...conditions),
    search,
    ...(text !== undefined && query.sort === undefined && { rank: text.rank }),
    orderBy: parseSort(mod, query.sort),
    limit,
    offset,
    includeDeleted,
    filtersEncrypted,
    encryptedFields,
  }
}

/** A filter a list takes: its parameter name and the operators `parseListQuery` accepts on it. */
export interface ListFilter {
  name: string
  operators: readonly FilterOperator[]
  /** An encrypted field, compared through its blind index (needs `descifrar`). */
  blind: boolean
}

/** Every filter of `mod`, as `parseListQuery` reads it, so the OpenAPI document lists exactly these. */
export function listFilters (mod: ModuleDef): ListFilter[] {
  // A field that is not filterable may still take its type's search operators (a text's contiene, an array's vacio).
  const names = [...SYSTEM_TARGETS, ...mod.fields.filter((f) => operatorsOf(f).length > 0).map((f) => f.name)]
  return names.map((name) => {
    const t = targetOf(mod, name)!
    return { name, operators: t.operators, blind: t.blind }
  })
}

/** The parameters every list takes besides the filters. */
export const LIST_PARAMETERS: readonly string[] = RESERVED
