/**
 * ModuleStorage (module-storage.ts) over the module's SQL table: each
 * write is one transaction that also appends the version to the history
 * and runs the hook bus; a create is the one-row case of the write path of
 * new records (create-path.ts): one statement with its first history
 * entry, alone or inside the transaction of its checks and `inside` hooks.
 * Every statement is a db/ function (row-query.ts, row-update.ts,
 * insert-batch.ts). Applies the scope conditions it is handed in every
 * query and decides no permission.
 */
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import type { FieldCipher } from '../../core/crypto.js'
import { AppError } from '../../core/errors.js'
import type { FieldDef, ModuleDef, Registry } from '../../core/registry/types.js'
import { nowSeconds } from '../../core/time.js'
import { columnSpec, itemIndexColumn, searchableItems, valueColumn } from '../../db/columns.js'
import { HISTORY_VERSION_UNIQUE, type ErasureCertificate } from '../../db/history-entity.js'
import { storedName } from '../../db/identifier.js'
import { InsertBatch } from '../../db/insert-batch.js'
import type { InsertColumn } from '../../db/insert-with-history.js'
import { updateRow } from '../../db/row-update.js'
import { entityName, type Row } from '../../db/module-entity.js'
import { liveIndexColumn } from '../../db/record-indexes.js'
import { LiveRowBatch } from '../../db/row-batch.js'
import { findRow, findRows, findRowsAndCount } from '../../db/row-query.js'
import { openRowCursor, type RowCursor } from '../../db/row-cursor.js'
import { insideTransaction, inTransaction } from '../../db/transaction.js'
import type { SequenceStore } from '../../stores/sequences/contract.js'
import { appendVersion } from '../history.js'
import type { HookBus, WriteEvent } from '../hooks.js'
import { drawIds } from '../ids.js'
import { changedFields } from '../integrity/chain.js'
import { normalizeBody, type ColumnValue } from '../normalize.js'
import { hashPayload } from '../record-view.js'
import { and, type Where } from '../scope.js'
import { checkMove } from '../state-machine.js'
import type { ListQuery } from '../list-query.js'
import { BulkChecks, type FirstRows } from './bulk-checks.js'
import { BulkCreate, type CreateManyOptions, type RecordBatches } from './bulk-create.js'
import { CreatePath } from './create-path.js'
import { writeErasure } from './erase-path.js'
import type { ChangeBody, CreateEms, ListPageOptions, ModuleStorage, NewRecord, RowGuard, RowProblem } from './module-storage.js'
import { hashPasswords, RowBuilder } from './row-builder.js'
import { WriteChecks } from './write-checks.js'

export interface StorageDeps {
  readonly registry: Registry
  readonly sequences: SequenceStore
  readonly cipher: FieldCipher
  readonly timeZone: string
  readonly hooks: HookBus
  /** The database pool's connections (RecordsLayerDeps). */
  readonly connections?: number
}

/** Rows an export reads at a time: memory stays about a batch of API records whatever the table's size. */
const EXPORT_BATCH = 500

/** What a change of a stored row does, for `change`. */
interface ChangeSpec {
  action: WriteEvent['action']
  live: boolean
  expectedVersion?: number
  /** The values written (none for a delete or restore); a function: made from the stored row, read and locked (ChangeBody). */
  values?: Map<FieldDef, ColumnValue> | ((before: Row) => Promise<Map<FieldDef, ColumnValue>>)
  write: (tem: Db, before: Row) => Promise<Row | undefined>
}

export class SqlModuleStorage implements ModuleStorage {
  private readonly entity: string
  private readonly rows: RowBuilder
  private readonly checks: WriteChecks
  /** The table's columns by name, with their jsonb flags (what an update binds). */
  private readonly columns: ReadonlyMap<string, InsertColumn>
  /** Ids have one shape; anything else cannot exist and never reaches the database. */
  private readonly idShape: RegExp
  private readonly bulk: BulkCreate
  private readonly bulkChecks: BulkChecks
  /** The one write path of new records: a create's, and an import's batches. */
  private readonly creates: CreatePath
  /** The whole live rows read by id outside a transaction with no scope, a statement per turn. */
  private readonly liveRows: LiveRowBatch

  constructor (private readonly mod: ModuleDef, private readonly deps: StorageDeps) {
    this.entity = entityName(mod)
    this.rows = new RowBuilder(mod, deps.cipher)
    this.checks = new WriteChecks(mod, deps.registry, deps.cipher)
    const jsonColumns = new Set([
      ...mod.fields.filter((f) => !f.encrypted && columnSpec(f).type === 'json').map(valueColumn),
      ...mod.fields.filter((f) => searchableItems(f).length > 0).map(itemIndexColumn),
    ])
    const insertColumns = this.rows.columns.map((name) => ({ name, json: jsonColumns.has(name) }))
    this.columns = new Map(insertColumns.map((c) => [c.name, c]))
    this.idShape = new RegExp(`^${mod.prefix}-\\d{4}-\\d{5,}$`)
    this.liveRows = new LiveRowBatch(this.entity, deps.connections)
    // A create whose id was taken fails on one of these (the one-statement create meets the history's first).
    const idKeys = new Set([storedName(`${mod.table}_pkey`), HISTORY_VERSION_UNIQUE])
    this.creates = new CreatePath(mod, deps.hooks, this.rows, new InsertBatch(mod.table, insertColumns), idKeys)
    this.bulkChecks = new BulkChecks(mod, deps, this.creates)
    this.bulk = new BulkCreate(mod, deps, { insertColumns, checks: this.bulkChecks, creates: this.creates })
  }

  get importBatch (): number { return this.bulk.batch }

  prepareMany (caller: Caller, records: readonly NewRecord[], first: FirstRows): Promise<RowProblem[]> {
    return this.bulkChecks.prepare(caller, records, first)
  }

  checkMany (em: Db, records: readonly NewRecord[], first?: FirstRows): Promise<RowProblem[]> {
    return this.bulkChecks.check(em, records, first)
  }

  createMany (em: Db, caller: Caller, records: RecordBatches, opts?: CreateManyOptions): Promise<string[]> {
    return this.bulk.create(em, caller, records, opts)
  }

  /**
   * A record by id (`live`: not deleted) within `visible`, optionally locked
   * for the transaction; else 404. A whole live row read with no scope
   * condition, outside a transaction, is read with the turn's other such
   * reads (db/row-batch.ts).
   */
  private async readRow (em: Db, id: string, opts: { live: boolean, lock: boolean, visible: Where | undefined, columns?: readonly string[] | undefined }): Promise<Row> {
    if (!this.idShape.test(id)) throw new AppError('REGISTRO_NO_ENCONTRADO')
    const shared = opts.live && !opts.lock && opts.visible === undefined && opts.columns === undefined && !insideTransaction(em)
    const row = shared
      ? await this.liveRows.row(em, id)
      : await findRow(em, this.entity, and(opts.live ? { _id: id, _deleted: null } : { _id: id }, opts.visible), opts.lock, opts.columns)
    if (row === null) throw new AppError('REGISTRO_NO_ENCONTRADO')
    return row
  }

  findLive (em: Db, id: string, visible?: Where, lock = false, columns?: readonly string[]): Promise<Row> {
    return this.readRow(em, id, { live: true, lock, visible, columns })
  }

  async findManyLive (em: Db, ids: readonly string[], visible?: Where, columns?: readonly string[]): Promise<Row[]> {
    const wellFormed = ids.filter((id) => this.idShape.test(id))
    if (wellFormed.length === 0) return []
    return findRows(em, this.entity, and({ _id: { $in: wellFormed }, _deleted: null }, visible), { ...(columns !== undefined && { columns }) })
  }

  findAny (em: Db, id: string, visible?: Where, lock = false): Promise<Row> {
    return this.readRow(em, id, { live: false, lock, visible })
  }

  /** The stored row within the guard's sight (404), which the action may change (403). */
  private async guarded (tem: Db, id: string, guard: RowGuard, live: boolean): Promise<Row> {
    const row = await this.readRow(tem, id, { live, lock: true, visible: guard.visible })
    if (!guard.allows(row)) throw new AppError('SIN_PERMISOS')
    return row
  }

  /**
   * A create is the one-row case of the create path (create-path.ts): its
   * `before` hooks, then one statement with its first history entry on
   * `ems.reads` when nothing needs a transaction (with the other creates of
   * this turn, db/insert-batch.ts), else in the transaction of its checks
   * and `inside` hooks; its `after` hooks once committed.
   */
  async create (ems: CreateEms, caller: Caller, body: Record<string, unknown>): Promise<Row> {
    const { mod, deps, creates } = this
    const { values } = normalizeBody(mod, body, 'create', deps.timeZone)
    // Each await only when something waits: a lone create runs cold (docs/performance.md "A create runs cold").
    const refusing = creates.before(caller, values)
    if (refusing !== undefined) await refusing
    const record = { values, stored: this.rows.hashesPasswords ? await hashPasswords(values) : values }
    // Nothing to check or run inside a transaction: the one statement is
    // the whole create, on an Db that need not be forked.
    const alone = !creates.hasInside && !this.checks.needed(values)
    const row = await creates.freshIds(async (floor, drew) => {
      if (alone) {
        const reads = ems.reads ?? ems.em
        return (await creates.write(reads, caller, [record], drew(await drawIds(reads, mod, deps.sequences, deps.timeZone, 1, floor))))[0]!
      }
      return inTransaction(ems.em, async (tem) => {
        await this.checks.checkRefs(tem, values)
        await this.checks.checkUnique(tem, values)
        return (await creates.write(tem, caller, [record], drew(await drawIds(tem, mod, deps.sequences, deps.timeZone, 1, floor))))[0]!
      })
    })
    const told = creates.after(caller, values, row)
    if (told !== undefined) await told
    return row
  }

  /**
   * Runs one change of a stored row as a transaction: read and lock it
   * within the guard (404, 403), check the version (409), let the hooks
   * refuse it, write it with its history entry, then tell the hooks.
   */
  private async change (em: Db, caller: Caller, id: string, guard: RowGuard, spec: ChangeSpec): Promise<Row> {
    const { mod, deps } = this
    const result = await inTransaction(em, async (tem) => {
      const before = await this.guarded(tem, id, guard, spec.live)
      if (spec.expectedVersion !== undefined && before._version !== spec.expectedVersion) throw new AppError('CONFLICTO_VERSION')
      const values = typeof spec.values === 'function' ? await spec.values(before) : spec.values ?? new Map()
      const event: WriteEvent = { module: mod, action: spec.action, caller, before, values, em: tem }
      await deps.hooks.emit('before', event)
      const after = await spec.write(tem, before)
      if (after === undefined) return { before }
      await deps.hooks.emit('inside', { ...event, after })
      return { before, event, after }
    })
    if (result.event === undefined) return result.before
    const { em: _tx, ...event } = result.event
    await deps.hooks.emit('after', { ...event, after: result.after })
    return result.after
  }

  async update (em: Db, caller: Caller, id: string, body: ChangeBody, guard: RowGuard, expectedVersion?: number): Promise<Row> {
    const { mod, deps } = this
    // A body as sent is normalised and its passwords hashed before the
    // transaction opens; one made from the stored row, once that is locked.
    const made = typeof body === 'function' ? body : undefined
    let change = typeof body === 'function' ? undefined : await this.changeOf(body)
    return this.change(em, caller, id, guard, {
      action: 'editar',
      live: true,
      values: made === undefined ? change!.values : async (before) => (change = await this.changeOf(await made(before))).values,
      ...(expectedVersion !== undefined && { expectedVersion }),
      write: async (tem, before) => {
        const { values, stored } = change!
        await this.checks.checkRefs(tem, values)
        await this.checks.checkUnique(tem, values, id)
        const changes = { ...this.rows.toColumns(id, stored), _modified: nowSeconds(), _modified_by: caller.id, _version: (before._version as number) + 1 }
        const after: Row = { ...before, ...changes }
        if (mod.stateField !== undefined) {
          const state = valueColumn(mod.fieldMap.get(mod.stateField)!)
          checkMove(mod, before[state], after[state], (f) => after[valueColumn(mod.fieldMap.get(f)!)])
        }
        const payload = this.rows.seal(after, before._hash as string)
        await updateRow(tem, mod.table, this.columns, id, { ...changes, _hash: after._hash })
        await appendVersion(tem, mod, after, 'editar', changedFields(mod, hashPayload(mod, before, deps.cipher, ''), payload), before)
        return after
      },
    })
  }

  /** An update's values: normalised, and as stored (passwords hashed). */
  private async changeOf (body: Record<string, unknown>): Promise<{ values: Map<FieldDef, ColumnValue>, stored: Map<FieldDef, ColumnValue> }> {
    const { values } = normalizeBody(this.mod, body, 'update', this.deps.timeZone)
    return { values, stored: await hashPasswords(values) }
  }

  async remove (em: Db, caller: Caller, id: string, guard: RowGuard, expectedVersion?: number): Promise<Row> {
    return this.change(em, caller, id, guard, {
      action: 'eliminar',
      live: true,
      ...(expectedVersion !== undefined && { expectedVersion }),
      write: (tem, before) => this.markDeleted(tem, caller, before, nowSeconds(), 'eliminar'),
    })
  }

  /** Undoes a soft delete (docs/user-guide.md "Concurrency, delete and restore"). */
  async restore (em: Db, caller: Caller, id: string, guard: RowGuard): Promise<Row> {
    return this.change(em, caller, id, guard, {
      action: 'restaurar',
      live: false,
      write: async (tem, before) => before._deleted === null ? undefined : this.markDeleted(tem, caller, before, null, 'restaurar'),
    })
  }

  /** Sets or clears `_deleted` as a new version (delete, restore). */
  private async markDeleted (tem: Db, caller: Caller, before: Row, deleted: Date | null, accion: 'eliminar' | 'restaurar'): Promise<Row> {
    const now = nowSeconds()
    const changes = { _deleted: deleted, _modified: now, _modified_by: caller.id, _version: (before._version as number) + 1 }
    const after: Row = { ...before, ...changes }
    this.rows.seal(after, before._hash as string)
    await updateRow(tem, this.mod.table, this.columns, before._id as string, { ...changes, _hash: after._hash })
    await appendVersion(tem, this.mod, after, accion, [], before)
    return after
  }

  async erase (em: Db, caller: Caller, id: string, certify: (tem: Db, before: Row) => Promise<ErasureCertificate>): Promise<Row> {
    return inTransaction(em, async (tem) => {
      const before = await this.readRow(tem, id, { live: false, lock: true, visible: undefined })
      return writeErasure(tem, this.mod, this.deps.cipher, this.columns, caller, before, await certify(tem, before))
    })
  }

  async list (em: Db, where: Where, page: ListPageOptions & { columns?: readonly string[] }): Promise<{ rows: Row[], total: number }> {
    const [rows, total] = await findRowsAndCount(em, this.entity, where, {
      ...(page.columns !== undefined && { columns: page.columns }),
      orderBy: page.orderBy,
      limit: page.limit,
      offset: page.offset,
      search: page.search,
      ...(page.rank !== undefined && { rank: page.rank }),
      onLiveIndex: liveIndexColumn(this.mod, where, page.orderBy) !== undefined,
    })
    return { rows, total }
  }

  cursor (em: Db, where: Where, q: Pick<ListQuery, 'orderBy' | 'search'> & { columns?: readonly string[] | undefined }): Promise<RowCursor> {
    return openRowCursor(em, this.entity, where, { orderBy: q.orderBy, search: q.search, batchSize: EXPORT_BATCH, ...(q.columns !== undefined && { columns: q.columns }) })
  }
}
