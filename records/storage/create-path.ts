/**
 * The one write path of new records, one or many: a POST's create is the
 * one-row case of an import's batch. Here, and only here, a create fires
 * the hook bus (`before` each record, `inside` its transaction, `after`
 * the commit), builds and seals each row with its first history entry and
 * writes them as one statement (db/insert-batch.ts), and draws ids again
 * when one was taken. What the callers add is their orchestration: a
 * create throws its first problem and writes alone when nothing needs a
 * transaction (sql-module-storage.ts); an import reports every row's
 * problem and writes a batch at a time in one transaction (bulk-checks.ts,
 * bulk-create.ts).
 */
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import { sequenceOf } from '../../core/ids.js'
import { isUniqueViolationOf } from '../../core/postgres-errors.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import type { InsertBatch } from '../../db/insert-batch.js'
import type { Row } from '../../db/module-entity.js'
import { versionEntry } from '../history.js'
import type { HookBus } from '../hooks.js'
import type { ColumnValue } from '../normalize.js'
import { turn } from './bulk-checks.js'
import type { RowBuilder } from './row-builder.js'

/** Draws of ids per write: a collision re-seeds from the database, so a second one needs a concurrent create. */
const ID_ATTEMPTS = 5

/** A new record's values as normalised (what the hooks see) and as stored (passwords hashed, before any transaction). */
export interface NewValues {
  readonly values: Map<FieldDef, ColumnValue>
  readonly stored: Map<FieldDef, ColumnValue>
}

export class CreatePath {
  constructor (
    private readonly mod: ModuleDef,
    private readonly hooks: HookBus,
    private readonly rows: RowBuilder,
    private readonly batch: InsertBatch,
    /** Constraints a create whose id was taken violates (the table's key, the history's first version). */
    private readonly idKeys: ReadonlySet<string>,
  ) {}

  /** Whether a create must run in a transaction for its hooks. */
  get hasInside (): boolean {
    return this.hooks.has(this.mod.name, 'inside')
  }

  get hasAfter (): boolean {
    return this.hooks.has(this.mod.name, 'after')
  }

  /** The `before` hooks of one new record: they may refuse it (throw); undefined when none waits (records/hooks.ts `emit`). */
  before (caller: Caller, values: Map<FieldDef, ColumnValue>): Promise<void> | undefined {
    return this.hooks.emit('before', { module: this.mod, action: 'crear', caller, values })
  }

  /**
   * The records under `ids`, sealed, each with its first history entry,
   * as one statement on `em` (in its transaction, or a lone one with the
   * turn's other creates), then each one's `inside` hooks. Returns the rows.
   */
  async write (em: Db, caller: Caller, records: readonly NewValues[], ids: readonly string[]): Promise<Row[]> {
    const rows: Row[] = []
    const histories = []
    for (const [i, r] of records.entries()) {
      if (i > 0) await turn(i)
      const { row, campos } = this.rows.newRow(ids[i]!, r.stored, caller)
      rows.push(row)
      histories.push(versionEntry(this.mod, row, 'crear', campos))
    }
    await this.batch.insert(em, rows, histories)
    if (this.hasInside) {
      for (const [i, row] of rows.entries()) await this.hooks.emit('inside', { module: this.mod, action: 'crear', caller, values: records[i]!.values, after: row, em })
    }
    return rows
  }

  /** The `after` hooks of one committed record; undefined when none waits. */
  after (caller: Caller, values: Map<FieldDef, ColumnValue>, row: Row): Promise<void> | undefined {
    return this.hooks.emit('after', { module: this.mod, action: 'crear', caller, values, after: row })
  }

  /**
   * Runs `attempt` until the ids it drew (told through `drew`) were free.
   * A taken one means the counter is behind the table (Redis restored
   * older, or lost while a create was in flight): the next draw re-seeds
   * above it and the stored ids, as `floor` (docs/operator-guide.md "Ids
   * and a Redis restore").
   */
  async freshIds<T> (attempt: (floor: number | undefined, drew: (ids: string[]) => string[]) => Promise<T>): Promise<T> {
    let floor: number | undefined
    for (let n = 1; ; n++) {
      let last: string | undefined
      try {
        return await attempt(floor, (ids) => { last = ids.at(-1); return ids })
      } catch (err) {
        if (last !== undefined && n < ID_ATTEMPTS && isUniqueViolationOf(err, this.idKeys)) {
          floor = Math.max(floor ?? 0, sequenceOf(last) ?? 0)
          continue
        }
        throw err
      }
    }
  }
}
