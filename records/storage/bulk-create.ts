/**
 * Many new records of one module at once, for an import (docs/user-guide.md
 * "Import (importar)"): each one as a POST would store it — the `before`
 * hooks, references to live records, unique values free (also between the
 * rows themselves), its id, seal (`_hash`) and first history entry, the
 * `inside` and `after` hooks — but all in one transaction, ids drawn as
 * one block in file order and the rows written a batch per statement
 * (db/insert-with-history.ts). The records arrive a batch at a time
 * (records/import-spool.ts), so none of this holds more than a batch.
 * Problems are reported per row rather than thrown, so a dry run
 * (`simular`) lists every one.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Caller } from '../../core/access.js'
import { AppError } from '../../core/errors.js'
import { sequenceOf } from '../../core/ids.js'
import { isUniqueViolationOf } from '../../core/postgres-errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { boundPerRow, insertManyWithHistory, insertWithHistorySql, type InsertColumn } from '../../db/insert-with-history.js'
import { entityName } from '../../db/module-entity.js'
import { findRows } from '../../db/row-query.js'
import { inTransaction } from '../../db/transaction.js'
import { versionEntry } from '../history.js'
import { drawIds } from '../ids.js'
import { turn } from './bulk-checks.js'
import type { BulkChecks } from './bulk-checks.js'
import type { NewRecord, RowProblem } from './module-storage.js'
import { hashPasswords, type RowBuilder } from './row-builder.js'
import type { StorageDeps } from './sql-module-storage.js'

/** PostgreSQL binds at most 65,535 values per statement; a batch stays well under. */
const MAX_BOUND = 60_000
const MAX_BATCH = 500
/** Whole-import attempts when the drawn block meets a stored id (the counter was behind, as in a create). */
const ID_ATTEMPTS = 5

/** What the module's storage shares with its bulk creates. */
export interface BulkParts {
  readonly rows: RowBuilder
  readonly insertColumns: readonly InsertColumn[]
  /** Constraints an id already taken violates. */
  readonly idKeys: ReadonlySet<string>
  readonly checks: BulkChecks
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
  private readonly statements = new Map<number, string>()
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
  async create (em: EntityManager, caller: Caller, records: RecordBatches, opts: CreateManyOptions = {}): Promise<string[]> {
    let floor: number | undefined
    for (let attempt = 1; ; attempt++) {
      let drawn: string[] = []
      try {
        await inTransaction(em, async (tem) => {
          drawn = await drawIds(tem, this.mod, this.deps.sequences, this.deps.timeZone, records.count, floor)
          let done = 0
          let refused = false
          for await (const batch of records.batches(this.batch)) {
            stopIfGone(opts.signal)
            const problems = await this.parts.checks.check(tem, batch)
            if (problems.length > 0) { refused = true; opts.onProblems?.(problems) }
            if (!refused) await this.write(tem, caller, batch, drawn.slice(done, done + batch.length))
            done += batch.length
            if (!refused) opts.onProgress?.(done, records.count)
          }
          if (refused) throw new ImportRefused()
          stopIfGone(opts.signal)
        })
        await this.after(em, caller, records, drawn)
        return drawn
      } catch (err) {
        // A stored id in the block: the counter was behind (docs/operator-guide.md "Ids and a Redis restore"); draw again above it.
        if (drawn.length > 0 && attempt < ID_ATTEMPTS && isUniqueViolationOf(err, this.parts.idKeys)) {
          floor = Math.max(floor ?? 0, sequenceOf(drawn.at(-1)!) ?? 0)
          continue
        }
        throw err
      }
    }
  }

  /** One batch: passwords hashed, rows built and sealed, one statement, the `inside` hooks. */
  private async write (tem: EntityManager, caller: Caller, batch: readonly NewRecord[], ids: readonly string[]): Promise<void> {
    const made = []
    for (const [i, r] of batch.entries()) {
      await turn(i)
      made.push(this.parts.rows.newRow(ids[i]!, await hashPasswords(r.values), caller))
    }
    await insertManyWithHistory(tem, this.statement(made.length), this.parts.insertColumns, made.map((m) => m.row), made.map((m) => versionEntry(this.mod, m.row, 'crear', m.campos)))
    if (!this.deps.hooks.has(this.mod.name, 'inside')) return
    for (const [i, m] of made.entries()) await this.deps.hooks.emit('inside', { module: this.mod, action: 'crear', caller, values: batch[i]!.values, after: m.row, em: tem })
  }

  /** After the commit, the `after` hooks of each record with its row as stored, read back a batch at a time. */
  private async after (em: EntityManager, caller: Caller, records: RecordBatches, ids: readonly string[]): Promise<void> {
    if (!this.deps.hooks.has(this.mod.name, 'after')) return
    let done = 0
    for await (const batch of records.batches(this.batch)) {
      const wanted = ids.slice(done, done + batch.length)
      done += batch.length
      const rows = new Map((await findRows(em, entityName(this.mod), { _id: { $in: [...wanted] } }, {})).map((row) => [row._id as string, row]))
      for (const [i, r] of batch.entries()) {
        await turn(i)
        const row = rows.get(wanted[i]!)
        if (row !== undefined) await this.deps.hooks.emit('after', { module: this.mod, action: 'crear', caller, values: r.values, after: row })
      }
    }
  }

  private statement (rows: number): string {
    let sql = this.statements.get(rows)
    if (sql === undefined) {
      sql = insertWithHistorySql(this.mod.table, this.parts.insertColumns, rows)
      this.statements.set(rows, sql)
    }
    return sql
  }
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
