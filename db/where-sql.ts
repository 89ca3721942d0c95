/**
 * The records layer's filter objects as SQL with numbered parameters, for
 * the reads it runs most (a record by id, a page and its total): what
 * MikroORM's query builder would write for the same object, without
 * building a query builder per request (issue 10: a third of a GET's CPU).
 *
 * It understands the vocabulary the records layer writes (records/scope.ts,
 * records/list-query.ts): `{ column: value }`, `null`, `$ne`, `$in`,
 * `$nin`, `$gt`, `$gte`, `$lt`, `$lte`, `$and`, `$or`, over plain column
 * names and scalar values. Anything else (a raw search fragment, an object
 * value) is answered with undefined, and the caller hands the filter to the
 * query builder instead. Pure.
 */

export type Scalar = string | number | boolean | Date

const COLUMN = /^[a-z_][a-z0-9_]*$/
const COMPARISONS: Readonly<Record<string, string>> = { $ne: '<>', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }

function isScalar (v: unknown): v is Scalar {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date
}

/** A parameter's placeholder: `params` receives the value. */
function param (params: unknown[], v: Scalar): string {
  params.push(v)
  return `$${params.length}`
}

function list (params: unknown[], values: unknown): string | undefined {
  if (!Array.isArray(values) || values.length === 0 || !values.every(isScalar)) return undefined
  return values.map((v) => param(params, v)).join(', ')
}

/** One column's condition: a value, null, or an object of operators. */
function columnCondition (column: string, v: unknown, params: unknown[]): string | undefined {
  const col = `"${column}"`
  if (v === null) return `${col} is null`
  if (isScalar(v)) return `${col} = ${param(params, v)}`
  if (typeof v !== 'object' || Array.isArray(v)) return undefined
  const parts: string[] = []
  for (const [op, operand] of Object.entries(v as Record<string, unknown>)) {
    if (op === '$in' || op === '$nin') {
      const items = list(params, operand)
      if (items === undefined) return undefined
      parts.push(`${col} ${op === '$in' ? 'in' : 'not in'} (${items})`)
    } else if (op === '$ne' && operand === null) {
      parts.push(`${col} is not null`)
    } else if (COMPARISONS[op] !== undefined && isScalar(operand)) {
      parts.push(`${col} ${COMPARISONS[op]} ${param(params, operand)}`)
    } else {
      return undefined
    }
  }
  return parts.length === 0 ? undefined : parts.join(' and ')
}

function group (items: unknown, joiner: 'and' | 'or', params: unknown[]): string | undefined {
  if (!Array.isArray(items) || items.length === 0) return undefined
  const parts: string[] = []
  for (const item of items) {
    const sql = whereSql(item, params)
    if (sql === undefined) return undefined
    parts.push(`(${sql})`)
  }
  return parts.join(` ${joiner} `)
}

/**
 * The filter as SQL (`true` for an empty one), pushing its values onto
 * `params` in placeholder order; undefined when it leaves the vocabulary.
 */
export function whereSql (where: unknown, params: unknown[]): string | undefined {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return undefined
  const parts: string[] = []
  for (const [key, v] of Object.entries(where as Record<string, unknown>)) {
    const sql = key === '$and' ? group(v, 'and', params) : key === '$or' ? group(v, 'or', params) : COLUMN.test(key) ? columnCondition(key, v, params) : undefined
    if (sql === undefined) return undefined
    parts.push(sql)
  }
  return parts.length === 0 ? 'true' : parts.join(' and ')
}

/** `order by` of `[{ column: 'asc' | 'desc' }]`; undefined when it leaves the vocabulary. */
export function orderSql (orderBy: ReadonlyArray<Record<string, string>>): string | undefined {
  const parts: string[] = []
  for (const o of orderBy) {
    for (const [column, dir] of Object.entries(o)) {
      if (!COLUMN.test(column) || (dir !== 'asc' && dir !== 'desc')) return undefined
      parts.push(`"${column}" ${dir}`)
    }
  }
  return parts.join(', ')
}
