/**
 * A query's conditions, in the one form the records layer writes them
 * (records/scope.ts, records/list-query.ts), and their only compiler: SQL
 * with numbered parameters, run by db/row-query.ts without building a
 * query builder per request (docs/performance.md: a third of a GET's CPU).
 *
 * The vocabulary: `{ column: value }`, `null`, `$ne`, `$in`, `$nin` (an
 * empty list matches nothing, resp. everything), `$gt`, `$gte`, `$lt`,
 * `$lte`, `$ilike` (a pattern: `contiene` on an id, records/search-query.ts),
 * `$and`, `$or`, over plain column names and scalar values;
 * `{ column: [...] }`, a jsonb column equal to that array (the uniqueness
 * check of an `array` field, records/storage/write-checks.ts); and
 * `{ $sql: SqlCondition }`, a search condition of db/search-sql.ts, so that
 * an any-of group may OR it with filters (records/any-of-query.ts). Anything else (an
 * object value, an unknown operator, a list of objects) is a programmer
 * error: a TypeError naming it, never handed to another query path. Pure.
 */

import { numbered } from './placeholders.js'
import type { SqlCondition } from './search-sql.js'

/** A filter of the vocabulary above. */
export type Where = Record<string, unknown>

export type Scalar = string | number | boolean | Date

const COLUMN = /^[a-z_][a-z0-9_]*$/
const COMPARISONS: Readonly<Record<string, string>> = { $ne: '<>', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }

function isScalar (v: unknown): v is Scalar {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date
}

/** The error for a filter outside the vocabulary: what left it and its kind, never a value (a filter holds personal data). */
function outside (what: string, v: unknown): TypeError {
  const kind = Array.isArray(v) ? `an array of ${v.length}` : v === null ? 'null' : v instanceof Date ? 'a date' : typeof v
  return new TypeError(`a filter outside the vocabulary of db/where-sql.ts: ${what} (${kind})`)
}

/** A parameter's placeholder: `params` receives the value. */
function param (params: unknown[], v: Scalar): string {
  params.push(v)
  return `$${params.length}`
}

/** `in` / `not in` a list; an empty one matches nothing (`in`) or everything (`not in`). */
function list (column: string, op: '$in' | '$nin', params: unknown[], values: unknown): string {
  if (!Array.isArray(values) || !values.every(isScalar)) throw outside(`"${column}" ${op}`, values)
  if (values.length === 0) return op === '$in' ? 'false' : 'true'
  return `"${column}" ${op === '$in' ? 'in' : 'not in'} (${values.map((v) => param(params, v)).join(', ')})`
}

/** One column's condition: a value, null, or an object of operators. */
function columnCondition (column: string, v: unknown, params: unknown[]): string {
  const col = `"${column}"`
  if (v === null) return `${col} is null`
  if (isScalar(v)) return `${col} = ${param(params, v)}`
  if (Array.isArray(v)) return `${col} = ${param(params, JSON.stringify(v))}::jsonb`
  if (typeof v !== 'object') throw outside(`the value of "${column}"`, v)
  const parts: string[] = []
  for (const [op, operand] of Object.entries(v as Record<string, unknown>)) {
    if (op === '$in' || op === '$nin') {
      parts.push(list(column, op, params, operand))
    } else if (op === '$ilike' && typeof operand === 'string') {
      parts.push(`${col} ilike ${param(params, operand)}`)
    } else if (op === '$ne' && operand === null) {
      parts.push(`${col} is not null`)
    } else if (COMPARISONS[op] !== undefined && isScalar(operand)) {
      parts.push(`${col} ${COMPARISONS[op]} ${param(params, operand)}`)
    } else {
      throw outside(`"${column}" ${op}`, operand)
    }
  }
  if (parts.length === 0) throw outside(`the value of "${column}"`, v)
  return parts.join(' and ')
}

/** `$sql`: a search condition (db/search-sql.ts), its placeholders numbered on. */
function embedded (c: unknown, params: unknown[]): string {
  const sql = c as Partial<SqlCondition> | null
  if (sql === null || typeof sql !== 'object' || typeof sql.sql !== 'string' || !Array.isArray(sql.params)) throw outside('$sql', c)
  return `(${numbered(sql as SqlCondition, params)})`
}

function group (key: string, items: unknown, joiner: 'and' | 'or', params: unknown[]): string {
  if (!Array.isArray(items) || items.length === 0) throw outside(key, items)
  return items.map((item) => `(${whereSql(item, params)})`).join(` ${joiner} `)
}

/**
 * The filter as SQL (`true` for an empty one), pushing its values onto
 * `params` in placeholder order; a TypeError when it leaves the vocabulary.
 */
export function whereSql (where: unknown, params: unknown[]): string {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) throw outside('a filter that is not an object', where)
  const parts: string[] = []
  for (const [key, v] of Object.entries(where as Record<string, unknown>)) {
    if (key === '$and' || key === '$or') parts.push(group(key, v, key === '$and' ? 'and' : 'or', params))
    else if (key === '$sql') parts.push(embedded(v, params))
    else if (COLUMN.test(key)) parts.push(columnCondition(key, v, params))
    else throw outside(`the key "${key.slice(0, 64)}"`, v)
  }
  return parts.length === 0 ? 'true' : parts.join(' and ')
}

/** `order by` of `[{ column: 'asc' | 'desc' }]`; a TypeError when it leaves the vocabulary. */
export function orderSql (orderBy: ReadonlyArray<Record<string, string>>): string {
  const parts: string[] = []
  for (const o of orderBy) {
    for (const [column, dir] of Object.entries(o)) {
      if (!COLUMN.test(column) || (dir !== 'asc' && dir !== 'desc')) throw outside('the order', o)
      parts.push(`"${column}" ${dir}`)
    }
  }
  return parts.join(', ')
}
