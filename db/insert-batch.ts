/**
 * The creates of one turn of the event loop written as one statement
 * (docs/performance.md "Creates of a turn in one statement"): every create
 * hands its row and first history entry here (records/storage/
 * create-path.ts); one inside a transaction is written in it at once, as is
 * an import's batch of rows,
 * and the rows of the turn's others go to PostgreSQL as one multi-row
 * `insertWithHistorySql`: one round
 * trip, one plan, one commit and one WAL flush for all of them, where each
 * create was one of each. Nothing a create guarantees changes: it is
 * answered only once its statement committed, and its rows carry the
 * statement's transaction id, by which the global chain orders entries
 * (records/integrity/global-chain.ts) as it does an import's.
 *
 * A statement commits whole or not at all. When PostgreSQL refuses one for
 * a value it holds (a taken id, a value out of a column's range: SQLSTATE
 * class 23 or 22), it wrote nothing, and each of its creates is written
 * alone, so each gets the answer it would have got by itself: one create's
 * problem never fails another. Any other failure fails every create of the
 * statement with it, as each alone would have failed, and none is written
 * again: a statement whose answer was lost (the connection dropped, the
 * backend terminated) may have committed, and written again would store its
 * records twice; one cancelled or timed out failed for the database's
 * state, not for one create's values.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { Coalescer } from '../core/coalesce.js'
import { isRefusedValue } from '../core/postgres-errors.js'
import type { Row } from './module-entity.js'
import { insertManyWithHistory, insertWithHistory, insertWithHistorySql, type InsertColumn } from './insert-with-history.js'

/** Most creates of a turn in one statement: at most 16 statement texts per table for them (each a named statement on PostgreSQL), beside an import's batch sizes. */
const MAX_ROWS = 16

interface Insert {
  readonly em: EntityManager
  readonly row: Row
  readonly history: object
}

export class InsertBatch {
  /** Each create's outcome: undefined when written, else its own error. */
  private readonly inserts: Coalescer<Insert, Error | undefined>
  /** The statement for n rows, at n (made on first use; an import's batches use one or two sizes). */
  private readonly texts: string[] = []

  /**
   * One statement of the module's creates at a time: the creates arriving
   * while it runs wait, and go together when it ends (core/coalesce.ts
   * `inFlight`; after a second without an end they go anyway). Larger
   * statements cost less a create under load, and a lone create finds
   * none running (docs/performance.md "One create statement at a time").
   */
  constructor (private readonly table: string, private readonly columns: readonly InsertColumn[]) {
    this.inserts = new Coalescer(async (batch) => this.write(batch), MAX_ROWS, 1)
  }

  /**
   * Writes rows and their history entries as one statement: in `em`'s
   * transaction when it holds one (never held for the turn: a create with
   * its checks, an import's batch), else a lone row with the other creates
   * of this turn.
   */
  async insert (em: EntityManager, rows: readonly Row[], histories: readonly object[]): Promise<void> {
    if (rows.length > 1 || em.getTransactionContext() !== undefined) return insertManyWithHistory(em, this.sql(rows.length), this.columns, rows, histories)
    const err = await this.inserts.call({ em, row: rows[0]!, history: histories[0]! })
    if (err !== undefined) throw err
  }

  private sql (rows: number): string {
    return this.texts[rows] ??= insertWithHistorySql(this.table, this.columns, rows)
  }

  private async write (batch: readonly Insert[]): Promise<Array<Error | undefined>> {
    if (batch.length > 1) {
      try {
        // Any EntityManager of the batch serves: none holds a transaction, so each takes a pooled connection.
        await insertManyWithHistory(batch[0]!.em, this.sql(batch.length), this.columns, batch.map((b) => b.row), batch.map((b) => b.history))
        return batch.map(() => undefined)
      } catch (err) {
        if (!isRefusedValue(err)) return batch.map(() => err as Error)
        // Which create the statement was refused for is not said: each is written alone below.
      }
    }
    return Promise.all(batch.map(async (b) => {
      try {
        await insertWithHistory(b.em, this.sql(1), this.columns, b.row, b.history)
        return undefined
      } catch (err) {
        return err as Error
      }
    }))
  }
}
