/**
 * Keyset pagination (db/row-cursor.ts, embedded mode): the condition of
 * the rows that come after `last` in an order, so the next batch is read
 * with `where <filter> and <after> order by … limit n` and nothing is held
 * between batches. The order ends with `_id` (records/list-query.ts
 * appends it), so every row has one place. PostgreSQL's defaults: NULLs
 * last in an ascending column, first in a descending one. Pure, in the
 * `Where` vocabulary (db/where-sql.ts).
 */
import type { Row } from './module-entity.js'
import type { Where } from './where-sql.js'

type Order = ReadonlyArray<Record<string, 'asc' | 'desc'>>

/** The column equal to `v` (NULL equal to NULL). */
function same (column: string, v: unknown): Where {
  return { [column]: v ?? null }
}

/** The column strictly after `v` in its direction; undefined when nothing can be. */
function beyond (column: string, dir: 'asc' | 'desc', v: unknown): Where | undefined {
  const empty = v === null || v === undefined
  if (dir === 'asc') return empty ? undefined : { $or: [{ [column]: { $gt: v } }, { [column]: null }] }
  return empty ? { [column]: { $ne: null } } : { [column]: { $lt: v } }
}

/** Rows after `last` in `orderBy`: equal on the first k keys and beyond on the next, for some k. */
export function keysetAfter (orderBy: Order, last: Row): Where {
  const keys = orderBy.flatMap((o) => Object.entries(o))
  const end = keys.findIndex(([c]) => c === '_id')
  const used = end < 0 ? keys : keys.slice(0, end + 1)
  const any: Where[] = []
  used.forEach(([column, dir], i) => {
    const next = beyond(column, dir, last[column])
    if (next === undefined) return
    const before = used.slice(0, i).map(([c]) => same(c, last[c]))
    any.push(before.length === 0 ? next : { $and: [...before, next] })
  })
  return any.length === 0 ? { _id: { $in: [] } } : any.length === 1 ? any[0]! : { $or: any }
}
