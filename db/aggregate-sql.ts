/**
 * A summary's one statement (docs/user-guide.md "Summaries (resumen)"): the
 * matching rows grouped by up to three keys, each group's count and
 * measures, ordered and cut, with the number of groups and of rows beside
 * every group (window functions, computed before the cut). A date or
 * date-time key is grouped by its truncation in the service time zone and
 * only each group's is formatted, so a million rows cost one `date_trunc`
 * each, never a `to_char`. A count by one plain key reads the key's live
 * count index alone (db/record-indexes.ts). Columns come from the
 * registry, never from the client; the time zone is a bound value.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { selectOver } from './row-query.js'
import type { SqlCondition } from './search-sql.js'
import type { Where } from './where-sql.js'

export type AggregateBucket = 'day' | 'week' | 'month' | 'year' | 'hour'
export type AggregateFunction = 'sum' | 'avg' | 'min' | 'max'

export interface AggregateKey {
  readonly column: string
  readonly bucket?: AggregateBucket
  /** A `date` column (a calendar day, no time zone); else a bucketed column is a `timestamptz`. */
  readonly date?: boolean
}

export interface AggregateMeasure {
  readonly fn: AggregateFunction
  readonly column: string
  /** A `date` column: its min and max read as `YYYY-MM-DD` text. */
  readonly date?: boolean
}

export interface AggregateOrder {
  /** `n` (the count), `k<i>` (a key) or `m<i>` (a measure). */
  readonly output: string
  readonly desc: boolean
}

export interface Aggregate {
  readonly keys: readonly AggregateKey[]
  readonly measures: readonly AggregateMeasure[]
  readonly order: readonly AggregateOrder[]
  readonly limit: number
  readonly timeZone: string
}

/** One group: its keys (`k<i>`), count (`n`), measures (`m<i>`), and the totals (`groups`, `total`). */
export type AggregateRow = Record<string, unknown>

const COLUMN = /^[a-z_][a-z0-9_]*$/
const OUTPUT = /^(n|k\d|m\d{1,2})$/

/** How each bucket's truncation is shown: `2026-06-01`, `2026-W22` (ISO), `2026-06`, `2026`, `2026-06-01 10`. */
const FORMATS: Readonly<Record<AggregateBucket, string>> = { day: 'YYYY-MM-DD', week: 'IYYY-"W"IW', month: 'YYYY-MM', year: 'YYYY', hour: 'YYYY-MM-DD HH24' }

function column (name: string): string {
  if (!COLUMN.test(name)) throw new TypeError(`not a column name: ${name.slice(0, 64)}`)
  return `"${name}"`
}

/** A key: what the rows are grouped by, and what each group shows of it. */
function keySql (k: AggregateKey, zone: () => string): { group: string, shown: string } {
  const col = column(k.column)
  if (k.bucket === undefined) return { group: col, shown: col }
  // A date is a wall-clock day already; an instant is moved to the zone's wall clock first.
  const wall = k.date === true ? `${col}::timestamp` : `${col} at time zone ${zone()}`
  const group = `date_trunc('${k.bucket}', ${wall})`
  return { group, shown: `to_char(${group}, '${FORMATS[k.bucket]}')` }
}

function measureSql (m: AggregateMeasure): string {
  const col = column(m.column)
  // A mean to the cent, as decimals are stored (docs/user-guide.md "Summaries (resumen)").
  if (m.fn === 'avg') return `round(avg(${col}), 2)`
  return m.date === true ? `${m.fn}(${col})::text` : `${m.fn}(${col})`
}

/** The statement, pushing the time zone onto `params` when a key needs it. */
export function aggregateSql (a: Aggregate, from: string, cond: string, params: unknown[]): string {
  let tz: string | undefined
  const zone = (): string => (tz ??= `$${params.push(a.timeZone)}`)
  const keys = a.keys.map((k) => keySql(k, zone))
  const select = [
    ...keys.map((k, i) => `${k.shown} as "k${i}"`),
    'count(*)::int as "n"',
    ...a.measures.map((m, i) => `${measureSql(m)} as "m${i}"`),
    '(count(*) over ())::int as "groups"',
    '(sum(count(*)) over ())::bigint as "total"',
  ]
  let sql = `select ${select.join(', ')}${from} where ${cond}`
  if (keys.length > 0) sql += ` group by ${keys.map((k) => k.group).join(', ')}`
  const order = a.order.map((o) => {
    if (!OUTPUT.test(o.output)) throw new TypeError(`not an output of the aggregate: ${o.output.slice(0, 64)}`)
    return `"${o.output}" ${o.desc ? 'desc' : 'asc'} nulls last`
  })
  if (order.length > 0) sql += ` order by ${order.join(', ')}`
  if (!Number.isSafeInteger(a.limit) || a.limit < 1) throw new TypeError(`not a limit: ${a.limit}`)
  return `${sql} limit ${a.limit}`
}

/** The groups of the rows matching `where` and `search`, in order, at most `limit` of them. */
export async function aggregateRows (em: EntityManager, entity: string, where: Where, search: readonly SqlCondition[], a: Aggregate): Promise<AggregateRow[]> {
  return selectOver(em, entity, where, search, (from, cond, params) => aggregateSql(a, from, cond, params))
}
