/**
 * A summary of the rows a caller may see (docs/user-guide.md "Summaries
 * (resumen)"): the parsed request (records/summary-query.ts) as one
 * aggregate statement (db/aggregate-sql.ts), and its rows as the API's
 * groups. The caller's scope, filters and read log are the records
 * service's (records/records-service.ts `summary`).
 */
import type { Db } from '../db/statement.js'
import { FIELD_TYPES_IMPL } from '../core/field-types/index.js'
import { formatDateTime } from '../core/time.js'
import { aggregateRows, type Aggregate, type AggregateBucket, type AggregateFunction, type AggregateOrder } from '../db/aggregate-sql.js'
import type { SqlCondition } from '../db/search-sql.js'
import type { Where } from '../db/where-sql.js'
import type { Bucket, MeasureName, SummaryField, SummaryQuery } from './summary-query.js'

export type SummaryGroup = Record<string, unknown>

export interface Summary {
  grupos: SummaryGroup[]
  /** How many groups there are (`grupos` holds at most `limit` of them). */
  total_grupos: number
  /** How many records matched. */
  total: number
}

const BUCKET_SQL: Readonly<Record<Bucket, AggregateBucket>> = { dia: 'day', semana: 'week', mes: 'month', año: 'year', hora: 'hour' }
const MEASURE_SQL: Readonly<Record<MeasureName, AggregateFunction>> = { suma: 'sum', media: 'avg', min: 'min', max: 'max' }

/**
 * The order asked for, then the largest groups first, then the keys
 * ascending (a record with no value last): every group's place is the
 * same on every call.
 */
function orderOf (s: SummaryQuery): AggregateOrder[] {
  const output = (name: string): string => {
    if (name === 'cantidad') return 'n'
    const k = s.keys.findIndex((key) => key.name === name)
    return k !== -1 ? `k${k}` : `m${s.measures.findIndex((m) => m.name === name)}`
  }
  const order: AggregateOrder[] = s.order.map((o) => ({ output: output(o.name), desc: o.desc }))
  if (!order.some((o) => o.output === 'n')) order.push({ output: 'n', desc: true })
  for (let i = 0; i < s.keys.length; i++) if (!order.some((o) => o.output === `k${i}`)) order.push({ output: `k${i}`, desc: false })
  return order
}

export function aggregateOf (s: SummaryQuery, timeZone: string): Aggregate {
  return {
    keys: s.keys.map((k) => ({ column: k.field.column, ...(k.bucket !== undefined && { bucket: BUCKET_SQL[k.bucket] }), date: k.field.type === 'date' })),
    measures: s.measures.map((m) => ({ fn: MEASURE_SQL[m.measure], column: m.field.column, date: m.field.type === 'date' })),
    order: orderOf(s),
    limit: s.limit,
    timeZone,
  }
}

/** A stored value as the API shows the field (a bucket's text is shown as it is; sums and means are numbers). */
function shown (v: unknown, field: SummaryField, timeZone: string, asNumber: boolean): unknown {
  if (v === null || v === undefined) return null
  if (asNumber) return Number(v)
  return FIELD_TYPES_IMPL[field.type].view(v, (d) => formatDateTime(d, timeZone))
}

/** The groups of the rows matching `where` and `search` (the caller's scope in it already). */
export async function summarize (em: Db, entity: string, where: Where, search: readonly SqlCondition[], s: SummaryQuery, timeZone: string): Promise<Summary> {
  const rows = await aggregateRows(em, entity, where, search, aggregateOf(s, timeZone))
  const grupos = rows.map((row) => {
    const group: SummaryGroup = {}
    s.keys.forEach((k, i) => { group[k.name] = k.bucket !== undefined ? row[`k${i}`] ?? null : shown(row[`k${i}`], k.field, timeZone, false) })
    group.cantidad = row.n
    s.measures.forEach((m, i) => { group[m.name] = shown(row[`m${i}`], m.field, timeZone, m.measure === 'suma' || m.measure === 'media' || m.field.type === 'decimal') })
    return group
  })
  return { grupos, total_grupos: rows.length === 0 ? 0 : rows[0]!.groups as number, total: rows.length === 0 ? 0 : Number(rows[0]!.total) }
}
