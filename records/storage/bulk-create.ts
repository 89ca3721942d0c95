/**
 * Many new records of one module at once, for an import (docs/user-guide.md
 * "Import (importar)"): each one as a POST would store it — the `before`
 * hooks, references to live records, unique values free (also between the
 * rows themselves), its id, seal (`_hash`) and first history entry, the
 * `inside` and `after` hooks — but all in one transaction, ids drawn as
 * one block in file order and the rows written a batch per statement
 * by the one write path of new records (create-path.ts). The records arrive a batch at a time
 * (records/import-spool.ts), so none of this holds more than a batch.
 * Problems are reported per row rather than thrown, so a dry run
 * (`simular`) lists every one.
 */
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import { AppError } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { boundPerRow, type InsertColumn } from '../../db/insert-with-history.js'
import { entityName } from '../../db/module-entity.js'
import { findRows } from '../../db/row-query.js'
import { inTransaction } from '../../db/transaction.js'
import { drawIds } from '../ids.js'
import { turn } from './bulk-checks.js'
import type { BulkChecks } from './bulk-checks.js'
import type { CreatePath, NewValues } from './create-path.js'
import type { NewRecord, RowProblem } from './module-storage.js'
import { hashPasswords } from './row-builder.js'
import type { StorageDeps } from './sql-module-storage.js'

/** PostgreSQL binds at most 65,535 values per statement; a batch stays well under. */
const MAX_BOUND = 60_000
const MAX_BATCH = 500

/** What the module's storage shares with its bulk creates. */
export interface BulkParts {
  readonly insertColumns: readonly InsertColumn[]
  readonly checks: BulkChecks
  /** The one write path of new records, which a create takes too. */
  readonly creates: CreatePath
}

/**
 * An import's validated records, read a batch at a time (records/import-spool.ts):
 * `count` of them, in file order, readable again from the start.
 */
export interface RecordBatches {
  readonly count: number
  batches (size: number): AsyncIterable<NewRecord[]>
}

/** How an import's records are stored: progress after each batch, its problems, and the signal of the client's going away. */
export interface CreateManyOptions {
  readonly onProgress?: (done: number, total: number) => void
  /** Problems the transaction's checks found (then nothing is written, and ImportRefused is thrown at the end). */
  readonly onProblems?: (problems: RowProblem[]) => void
  readonly signal?: AbortSignal
}

export class BulkCreate {
  /** Records per statement (and per batch read). */
  readonly batch: number

  constructor (private readonly mod: ModuleDef, private readonly deps: StorageDeps, private readonly parts: BulkParts) {
    this.batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(MAX_BOUND / boundPerRow(parts.insertColumns))))
  }

  /**
   * Writes every record in one transaction, checking each batch in it
   * first. Problems stop the writing but not the checking, so every one
   * is reported (`onProblems`); then everything is rolled back and
   * ImportRefused thrown. So does the client's going away (`signal`),
   * checked before each batch and before the commit. Returns the ids in
   * file order.
   */
  async create (em: Db, caller: Caller, records: RecordBatches, opts: CreateManyOptions = {}): Promise<string[]> {
    const { creates, checks } = this.parts
    const ids = await creates.freshIds(async (floor, drew) => inTransaction(em, async (tem) => {
      const drawn = drew(await drawIds(tem, this.mod, this.deps.sequences, this.deps.timeZone, records.count, floor))
      let done = 0
      let refused = false
      for await (const batch of records.batches(this.batch)) {
        stopIfGone(opts.signal)
        const problems = await checks.check(tem, batch)
        if (problems.length > 0) { refused = true; opts.onProblems?.(problems) }
        if (!refused) await creates.write(tem, caller, await hashed(batch), drawn.slice(done, done + batch.length))
        done += batch.length
        if (!refused) opts.onProgress?.(done, records.count)
      }
      if (refused) throw new ImportRefused()
      stopIfGone(opts.signal)
      return drawn
    }))
    await this.after(em, caller, records, ids)
    return ids
  }

  /** After the commit, the `after` hooks of each record with its row as stored, read back a batch at a time. */
  private async after (em: Db, caller: Caller, records: RecordBatches, ids: readonly string[]): Promise<void> {
    if (!this.parts.creates.hasAfter) return
    let done = 0
    for await (const batch of records.batches(this.batch)) {
      const wanted = ids.slice(done, done + batch.length)
      done += batch.length
      const rows = new Map((await findRows(em, entityName(this.mod), { _id: { $in: [...wanted] } }, {})).map((row) => [row._id as string, row]))
      for (const [i, r] of batch.entries()) {
        await turn(i)
        const row = rows.get(wanted[i]!)
        if (row !== undefined) await this.parts.creates.after(caller, r.values, row)
      }
    }
  }
}

/** A batch's values with their passwords hashed (in the import's transaction, a batch at a time: none is held longer). */
async function hashed (batch: readonly NewRecord[]): Promise<NewValues[]> {
  const out: NewValues[] = []
  for (const [i, r] of batch.entries()) {
    await turn(i)
    out.push({ values: r.values, stored: await hashPasswords(r.values) })
  }
  return out
}

/** The error of an import whose client went away: nothing written; no one reads the answer. */
export function clientGone (): AppError {
  return new AppError('PETICION_MAL_FORMADA', [{ campo: 'body', mensaje: 'el cliente cerró la conexión antes de la respuesta: no se ha escrito nada' }])
}

/** Throws clientGone() once `signal` is aborted. */
export function stopIfGone (signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw clientGone()
}

/** An import whose transaction's checks found problems (handed to `onProblems`): nothing was written. */
export class ImportRefused extends Error {
  constructor () {
    super('import refused')
    this.name = 'ImportRefused'
  }
}
