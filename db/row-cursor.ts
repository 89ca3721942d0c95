/**
 * Every row of a filter, in order, a batch at a time (an export,
 * docs/user-guide.md "Export (exportar)"), in constant memory: the caller
 * asks for the next batch when it has sent the last one.
 *
 * PostgreSQL: one snapshot. A pooled connection of its own holds a
 * `repeatable read, read only` transaction and a server-side cursor
 * (DECLARE … NO SCROLL CURSOR, FETCH n): every batch comes from the
 * database as it was when the export began, whatever is written meanwhile.
 * `close` ends the cursor and the transaction and gives the connection back
 * (also when the client went away mid-way, docs/decisions.md).
 *
 * Embedded (PGlite, one session for every connection, db/driver.ts
 * `oneSession`): a transaction held while a slow client reads would stop
 * every other request of the service, so each batch is its own statement,
 * the rows after the last one sent (db/keyset.ts). Nothing is held between
 * batches; rows written during the export may or may not appear
 * (docs/decisions.md).
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { ReservedConnection } from './driver.js'
import { keysetAfter } from './keyset.js'
import type { Row } from './module-entity.js'
import { findRows, selectRowsSql, serviceConnection } from './row-query.js'
import type { SqlCondition } from './search-sql.js'
import type { Where } from './where-sql.js'

export interface RowCursor {
  /** The next rows in order; empty once every row was read. */
  next (): Promise<Row[]>
  /** Ends the read (idempotent): cursor, transaction, connection. */
  close (): Promise<void>
}

export interface CursorQuery {
  /** Ends with `_id` (every row in one place). */
  orderBy: Array<Record<string, 'asc' | 'desc'>>
  search?: readonly SqlCondition[]
  batchSize: number
  /** Read only these columns (a projection, `campos`); the order's keys are added (the keyset needs them). */
  columns?: readonly string[]
}

/**
 * A batch's rows in an array of the cursor's own, the driver's emptied.
 * The driver's array can end up in V8's old generation; there, even dead,
 * it keeps every row it holds alive through young collections until a
 * full one, so each batch's rows were promoted and the old generation
 * filled with them: 150 MB of growth over a million rows, none once it is
 * emptied (docs/performance.md "Export of a million rows").
 */
function handOver (rows: Row[]): Row[] {
  const own = rows.slice()
  rows.length = 0
  return own
}

/** A cursor over every row of `entity` matching `where` and `q.search`, in `q.orderBy`. */
export async function openRowCursor (em: EntityManager, entity: string, where: Where, q: CursorQuery): Promise<RowCursor> {
  const connection = serviceConnection(em)
  const columns = q.columns && [...new Set([...q.columns, ...q.orderBy.flatMap((o) => Object.keys(o))])]
  if (connection.oneSession) return keysetCursor(em, entity, where, q, columns)
  const { text, params } = selectRowsSql(em, entity, where, q.orderBy, q.search, columns)
  const conn = await connection.reserve()
  try {
    await conn.query('begin isolation level repeatable read read only')
    await conn.query(`declare export_rows no scroll cursor for ${text}`, params)
  } catch (err) {
    await end(conn, 'rollback')
    throw em.getDriver().convertException(err as Error)
  }
  return snapshotCursor(em, conn, q.batchSize)
}

/** Ends the transaction and releases the connection, whatever state it is in. */
async function end (conn: ReservedConnection, how: 'commit' | 'rollback'): Promise<void> {
  try {
    await conn.query(how)
  } catch {
    // A lost connection: the pool finds it dead and replaces it.
  } finally {
    await conn.release()
  }
}

function snapshotCursor (em: EntityManager, conn: ReservedConnection, batchSize: number): RowCursor {
  let open = true
  return {
    async next () {
      if (!open) return []
      try {
        return handOver(await conn.query(`fetch ${batchSize} from export_rows`))
      } catch (err) {
        throw em.getDriver().convertException(err as Error)
      }
    },
    async close () {
      if (!open) return
      open = false
      // A read-only transaction: closing it commits nothing; `rollback` also ends one a failed FETCH aborted.
      await end(conn, 'rollback')
    },
  }
}

function keysetCursor (em: EntityManager, entity: string, where: Where, q: CursorQuery, columns: readonly string[] | undefined): RowCursor {
  let last: Row | undefined
  let done = false
  return {
    async next () {
      if (done) return []
      const rows = await findRows(em, entity, last === undefined ? where : { $and: [where, keysetAfter(q.orderBy, last)] }, { orderBy: q.orderBy, limit: q.batchSize, search: q.search, ...(columns !== undefined && { columns }) })
      last = rows[rows.length - 1]
      if (rows.length < q.batchSize) done = true
      return handOver(rows)
    },
    async close () {
      done = true
    },
  }
}
