/**
 * Any-of groups of a list query (docs/user-guide.md "Any-of filters (o[N])"):
 * `o[1][estado]=pendiente&o[1][prioridad][in]=alta,urgente` is "estado is
 * pendiente OR prioridad is alta or urgente". Groups `o[1]` … `o[9]` are
 * ANDed with each other and with the plain filters. Each condition of a
 * group is read exactly as a plain filter (records/list-query.ts hands its
 * reader over), so operators, type checks, blind indexes and the read log
 * are the same. Pure; a malformed group is a 400 naming the parameter as
 * sent.
 */
import { invalid } from '../core/errors.js'
import { apiHint } from '../core/registry/suggest.js'
import type { Where } from '../db/where-sql.js'
import type { Condition } from './search-query.js'

/** Reads filter `name[op]`, sent as parameter `key`: its condition, or undefined when `name` is no filter of the module. */
export type FilterReader = (key: string, name: string, op: string, raw: string | string[]) => Condition | undefined

/** The query parameter of the groups. */
export const ANY_OF_PARAMETER = 'o'
/** Groups `o[1]` … `o[MAX_GROUPS]`. */
export const MAX_GROUPS = 9

const SHAPE = /^o((?:\[[^[\]]*\])*)$/
const USE = 'use o[N][campo]=valor u o[N][campo][operador]=valor, con N del 1 al 9'

/** Whether a parameter belongs to the groups (`o`, `o[…]`), rather than being a plain filter. */
export function isAnyOfKey (key: string): boolean {
  return key === ANY_OF_PARAMETER || key.startsWith(`${ANY_OF_PARAMETER}[`)
}

/** `o[N][campo]`, `o[N][campo][op]` or `o[N]` as its parts; a 400 naming `key` when it is none of them. */
function partsOf (key: string): { group: number, name?: string, op: string } {
  const m = SHAPE.exec(key)
  const segments = m === null || m[1] === '' ? [] : m[1]!.slice(1, -1).split('][')
  if (segments.length === 0 || segments.length > 3) throw invalid(key, `grupo mal formado: ${USE}`)
  const [n, name, op] = segments as [string, string | undefined, string | undefined]
  if (!/^[1-9]$/.test(n)) throw invalid(key, `el grupo debe ser un número del 1 al ${MAX_GROUPS}`)
  return { group: Number(n), ...(name !== undefined && { name }), op: op ?? 'eq' }
}

type Filter = [name: string, op: string, raw: string | string[]]
const text = (v: unknown): string | string[] => Array.isArray(v) ? v.map((x) => String(x)) : String(v)

/**
 * `o[N]={"campo": valor, "campo2": {"op": valor}}`: a whole group as JSON,
 * the form the OpenAPI document describes (docs/user-guide.md "Any-of
 * filters (o[N])"); each value is then read like its bracket form, a list
 * under `in` like its comma-separated text.
 */
function jsonGroup (key: string, raw: string | string[]): Filter[] {
  let parsed: unknown
  try { parsed = typeof raw === 'string' && raw.startsWith('{') ? JSON.parse(raw) : undefined } catch { parsed = undefined }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid(key, `falta el campo: ${USE}`)
  return Object.entries(parsed).flatMap(([name, v]): Filter[] => v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.entries(v).map(([op, x]): Filter => [name, op, op === 'in' && Array.isArray(x) ? x.map((y) => String(y)).join(',') : text(x)])
    : [[name, 'eq', text(v)]])
}

/** A condition as a term of an OR: a search condition in SQL is embedded as `$sql` (db/where-sql.ts). */
function term (c: Condition): Where {
  return 'sql' in c ? { $sql: c.sql } : c.where
}

/**
 * The groups of `query`, each as one filter (an `$or` of its conditions;
 * a group of one condition is that condition), in the order of their
 * numbers. `names` gives the module's filters, for a "did you mean" hint.
 */
export function anyOfConditions (query: Record<string, string | string[] | undefined>, read: FilterReader, names: () => readonly string[]): Where[] {
  const groups = new Map<number, Where[]>()
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined || !isAnyOfKey(key)) continue
    const { group, name, op } = partsOf(key)
    const terms = groups.get(group) ?? []
    for (const [field, fieldOp, value] of name === undefined ? jsonGroup(key, raw) : [[name, op, raw] as Filter]) {
      const c = read(key, field, fieldOp, value)
      if (c === undefined) throw invalid(key, `campo desconocido "${field}"${apiHint(field, names())}`)
      terms.push(term(c))
    }
    if (terms.length === 0) throw invalid(key, `falta el campo: ${USE}`)
    groups.set(group, terms)
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([, terms]) => terms.length === 1 ? terms[0]! : { $or: terms })
}
