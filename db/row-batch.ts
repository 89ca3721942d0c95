/**
 * The reads of one live row by id in one turn of the event loop, as one
 * statement (docs/performance.md "Reads by id of a turn in one
 * statement"): `select … where "_id" in (…) and "_deleted" is null`, each
 * reader handed its own row or null. Only whole rows, outside a transaction,
 * without a lock or a scope condition come here
 * (records/storage/sql-module-storage.ts): what such a read answers does not
 * depend on who reads, so readers of a turn can share one statement. Each
 * still sees every write that committed before its request reached this
 * point: the statement is sent after the last of them arrived.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { Coalescer } from '../core/coalesce.js'
import type { Row } from './module-entity.js'
import { findRows } from './row-query.js'

/** Most ids in one statement: at most 16 statement texts per table (each a named statement on PostgreSQL). */
const MAX_IDS = 16

interface Read {
  readonly em: EntityManager
  readonly id: string
}

export class LiveRowBatch {
  private readonly reads: Coalescer<Read, Row | null>

  /** `connections`: the pool's size, most statements of a turn's reads at once (core/coalesce.ts `inFlight`). */
  constructor (private readonly entity: string, connections = Infinity) {
    this.reads = new Coalescer(async (batch) => this.read(batch), MAX_IDS, connections)
  }

  /** The live row of `id`, or null; `em` must hold no transaction. */
  row (em: EntityManager, id: string): Promise<Row | null> {
    return this.reads.call({ em, id })
  }

  private async read (batch: readonly Read[]): Promise<Array<Row | null>> {
    const ids = [...new Set(batch.map((r) => r.id))]
    // Any EntityManager of the batch serves: none holds a transaction.
    const rows = await findRows(batch[0]!.em, this.entity, { _id: ids.length === 1 ? ids[0]! : { $in: ids }, _deleted: null }, {})
    const byId = new Map(rows.map((row) => [row._id as string, row]))
    const handed = new Set<string>()
    return batch.map((r) => {
      const row = byId.get(r.id)
      if (row === undefined) return null
      // Two readers of one id get a row each: a reader may set a key of its row (the record view never shares one).
      if (handed.has(r.id)) return { ...row }
      handed.add(r.id)
      return row
    })
  }
}
