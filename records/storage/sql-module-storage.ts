/**
 * ModuleStorage (module-storage.ts) over the module's SQL table: each
 * write is one transaction that also appends the version to the history
 * and runs the hook bus; a create is one statement with its first history
 * entry (db/insert-with-history.ts), alone or inside the transaction of its
 * checks and `inside` hooks. Applies the scope conditions it is handed in
 * every query and decides no permission.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Caller } from '../../core/access.js'
import type { FieldCipher } from '../../core/crypto.js'
import { AppError } from '../../core/errors.js'
import { sequenceOf } from '../../core/ids.js'
import { isUniqueViolationOf } from '../../core/postgres-errors.js'
import type { FieldDef, ModuleDef, Registry } from '../../core/registry/types.js'
import { nowSeconds } from '../../core/time.js'
import { columnSpec, valueColumn } from '../../db/columns.js'
import { HISTORY_VERSION_UNIQUE } from '../../db/history-entity.js'
import { storedName } from '../../db/identifier.js'
import { InsertBatch } from '../../db/insert-batch.js'
import type { InsertColumn } from '../../db/insert-with-history.js'
import { entityName, type Row } from '../../db/module-entity.js'
import { liveIndexColumn } from '../../db/record-indexes.js'
import { LiveRowBatch } from '../../db/row-batch.js'
import { findRow, findRows, findRowsAndCount } from '../../db/row-query.js'
import { openRowCursor, type RowCursor } from '../../db/row-cursor.js'
import { inTransaction } from '../../db/transaction.js'
import type { SequenceStore } from '../../stores/sequences/contract.js'
import { appendVersion, versionEntry } from '../history.js'
import type { HookBus, WriteEvent } from '../hooks.js'
import { drawId } from '../ids.js'
import { changedFields } from '../integrity/chain.js'
import { normalizeBody, type ColumnValue } from '../normalize.js'
import { hashPayload } from '../record-view.js'
import { and, type Where } from '../scope.js'
import { checkMove } from '../state-machine.js'
import type { ListQuery } from '../list-query.js'
import { BulkChecks, type FirstRows } from './bulk-checks.js'
import { BulkCreate, type CreateManyOptions, type RecordBatches } from './bulk-create.js'
import type { CreateEms, ListPageOptions, ModuleStorage, NewRecord, RowGuard, RowProblem } from './module-storage.js'
import { hashPasswords, RowBuilder } from './row-builder.js'
import { WriteChecks } from './write-checks.js'

export interface StorageDeps {
  readonly registry: Registry
  readonly sequences: SequenceStore
  readonly cipher: FieldCipher
  readonly timeZone: string
  readonly hooks: HookBus
}

/** Rows an export reads at a time: memory stays about a batch of API records whatever the table's size. */
const EXPORT_BATCH = 500

/** Draws of an id per create: a collision re-seeds from the database, so a second one needs a concurrent create. */
const ID_ATTEMPTS = 5

/** What a change of a stored row does, for `change`. */
interface ChangeSpec {
  action: WriteEvent['action']
  live: boolean
  expectedVersion?: number
  values?: Map<FieldDef, ColumnValue>
  write: (tem: EntityManager, before: Row) => Promise<Row | undefined>
}

export class SqlModuleStorage implements ModuleStorage {
  private readonly entity: string
  private readonly rows: RowBuilder
  private readonly checks: WriteChecks
  private readonly insertColumns: readonly InsertColumn[]
  /** A create whose id was taken fails on one of these (the one-statement create meets the history's first). */
  private readonly idKeys: ReadonlySet<string>
  /** Ids have one shape; anything else cannot exist and never reaches the database. */
  private readonly idShape: RegExp
  private readonly bulk: BulkCreate
  private readonly bulkChecks: BulkChecks
  /** Every create's statement: in its transaction, or with the other creates of its turn. */
  private readonly batch: InsertBatch
  /** The whole live rows read by id outside a transaction with no scope, a statement per turn. */
  private readonly liveRows: LiveRowBatch

  constructor (private readonly mod: ModuleDef, private readonly deps: StorageDeps) {
    this.entity = entityName(mod)
    this.rows = new RowBuilder(mod, deps.cipher)
    this.checks = new WriteChecks(mod, deps.registry, deps.cipher)
    const jsonColumns = new Set(mod.fields.filter((f) => !f.encrypted && columnSpec(f).type === 'json').map(valueColumn))
    this.insertColumns = this.rows.columns.map((name) => ({ name, json: jsonColumns.has(name) }))
    this.idKeys = new Set([storedName(`${mod.table}_pkey`), HISTORY_VERSION_UNIQUE])
    this.idShape = new RegExp(`^${mod.prefix}-\\d{4}-\\d{5,}$`)
    this.batch = new InsertBatch(mod.table, this.insertColumns)
    this.liveRows = new LiveRowBatch(this.entity)
    this.bulkChecks = new BulkChecks(mod, deps)
    this.bulk = new BulkCreate(mod, deps, { rows: this.rows, insertColumns: this.insertColumns, idKeys: this.idKeys, checks: this.bulkChecks })
  }

  get importBatch (): number { return this.bulk.batch }

  prepareMany (caller: Caller, records: readonly NewRecord[], first: FirstRows): Promise<RowProblem[]> {
    return this.bulkChecks.prepare(caller, records, first)
  }

  checkMany (em: EntityManager, records: readonly NewRecord[], first?: FirstRows): Promise<RowProblem[]> {
    return this.bulkChecks.check(em, records, first)
  }

  createMany (em: EntityManager, caller: Caller, records: RecordBatches, opts?: CreateManyOptions): Promise<string[]> {
    return this.bulk.create(em, caller, records, opts)
  }

  /**
   * A record by id (`live`: not deleted) within `visible`, optionally locked
   * for the transaction; else 404. A whole live row read with no scope
   * condition, outside a transaction, is read with the turn's other such
   * reads (db/row-batch.ts).
   */
  private async find (em: EntityManager, id: string, opts: { live: boolean, lock: boolean, visible: Where | undefined, columns?: readonly string[] | undefined }): Promise<Row> {
    if (!this.idShape.test(id)) throw new AppError('REGISTRO_NO_ENCONTRADO')
    const shared = opts.live && !opts.lock && opts.visible === undefined && opts.columns === undefined && em.getTransactionContext() === undefined
    const row = shared
      ? await this.liveRows.find(em, id)
      : await findRow(em, this.entity, and(opts.live ? { _id: id, _deleted: null } : { _id: id }, opts.visible), opts.lock, opts.columns)
    if (row === null) throw new AppError('REGISTRO_NO_ENCONTRADO')
    return row
  }

  findLive (em: EntityManager, id: string, visible?: Where, lock = false, columns?: readonly string[]): Promise<Row> {
    return this.find(em, id, { live: true, lock, visible, columns })
  }

  async findManyLive (em: EntityManager, ids: readonly string[], visible?: Where, columns?: readonly string[]): Promise<Row[]> {
    const wellFormed = ids.filter((id) => this.idShape.test(id))
    if (wellFormed.length === 0) return []
    return findRows(em, this.entity, and({ _id: { $in: wellFormed }, _deleted: null }, visible), { ...(columns !== undefined && { columns }) })
  }

  findAny (em: EntityManager, id: string, visible?: Where, lock = false): Promise<Row> {
    return this.find(em, id, { live: false, lock, visible })
  }

  /** The stored row within the guard's sight (404), which the action may change (403). */
  private async guarded (tem: EntityManager, id: string, guard: RowGuard, live: boolean): Promise<Row> {
    const row = await this.find(tem, id, { live, lock: true, visible: guard.visible })
    if (!guard.allows(row)) throw new AppError('SIN_PERMISOS')
    return row
  }

  /**
   * A new record and its first history entry, as one statement on `em`: in
   * its transaction, if it holds one; else with the other creates of this
   * turn (db/insert-batch.ts).
   */
  private async insertNew (em: EntityManager, id: string, caller: Caller, stored: Map<FieldDef, ColumnValue>): Promise<Row> {
    const { row, campos } = this.rows.newRow(id, stored, caller)
    const history = versionEntry(this.mod, row, 'crear', campos)
    await this.batch.insert(em, row, history)
    return row
  }

  async create (ems: CreateEms, caller: Caller, body: Record<string, unknown>): Promise<Row> {
    const { mod, deps } = this
    const { values } = normalizeBody(mod, body, 'create', deps.timeZone)
    const event: WriteEvent = { module: mod, action: 'crear', caller, values }
    await deps.hooks.emit('before', event)
    const stored = await hashPasswords(values)
    /** After a collision: the number that was taken; the next draw re-seeds above it and the stored ids. */
    let taken: number | undefined
    let drawn: string | undefined
    const draw = async (em: EntityManager): Promise<string> => {
      drawn = await drawId(em, mod, deps.sequences, deps.timeZone, taken)
      return drawn
    }
    // Nothing to check or run inside a transaction: the one statement is
    // the whole create, on an EntityManager that need not be forked.
    const alone = !deps.hooks.has(mod.name, 'inside') && !this.checks.needed(values)
    for (let attempt = 1; ; attempt++) {
      try {
        const reads = ems.reads ?? ems.em
        const row = alone ? await this.insertNew(reads, await draw(reads), caller, stored) : await inTransaction(ems.em, async (tem) => {
          await this.checks.checkRefs(tem, values)
          await this.checks.checkUnique(tem, values)
          const row = await this.insertNew(tem, await draw(tem), caller, stored)
          await deps.hooks.emit('inside', { ...event, after: row, em: tem })
          return row
        })
        await deps.hooks.emit('after', { ...event, after: row })
        return row
      } catch (err) {
        // The id was taken: the counter is behind the table (Redis restored
        // older, or lost while a create was in flight). Re-seed above the
        // collision and the stored ids, and draw again (docs/operator-guide.md "Ids and a Redis restore").
        if (drawn !== undefined && attempt < ID_ATTEMPTS && isUniqueViolationOf(err, this.idKeys)) {
          taken = Math.max(taken ?? 0, sequenceOf(drawn) ?? 0)
          drawn = undefined
          continue
        }
        throw err
      }
    }
  }

  /**
   * Runs one change of a stored row as a transaction: read and lock it
   * within the guard (404, 403), check the version (409), let the hooks
   * refuse it, write it with its history entry, then tell the hooks.
   */
  private async change (em: EntityManager, caller: Caller, id: string, guard: RowGuard, spec: ChangeSpec): Promise<Row> {
    const { mod, deps } = this
    const result = await inTransaction(em, async (tem) => {
      const before = await this.guarded(tem, id, guard, spec.live)
      if (spec.expectedVersion !== undefined && before._version !== spec.expectedVersion) throw new AppError('CONFLICTO_VERSION')
      const event: WriteEvent = { module: mod, action: spec.action, caller, before, values: spec.values ?? new Map(), em: tem }
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

  async update (em: EntityManager, caller: Caller, id: string, body: Record<string, unknown>, guard: RowGuard, expectedVersion?: number): Promise<Row> {
    const { mod, deps } = this
    const { values } = normalizeBody(mod, body, 'update', deps.timeZone)
    const stored = await hashPasswords(values)
    return this.change(em, caller, id, guard, {
      action: 'editar',
      live: true,
      values,
      ...(expectedVersion !== undefined && { expectedVersion }),
      write: async (tem, before) => {
        await this.checks.checkRefs(tem, values)
        await this.checks.checkUnique(tem, values, id)
        const changes = { ...this.rows.toColumns(id, stored), _modified: nowSeconds(), _modified_by: caller.id, _version: (before._version as number) + 1 }
        const after: Row = { ...before, ...changes }
        if (mod.stateField !== undefined) {
          const state = valueColumn(mod.fieldMap.get(mod.stateField)!)
          checkMove(mod, before[state], after[state], (f) => after[valueColumn(mod.fieldMap.get(f)!)])
        }
        const payload = this.rows.seal(after, before._hash as string)
        await tem.nativeUpdate(this.entity, { _id: id }, { ...changes, _hash: after._hash })
        await appendVersion(tem, mod, after, 'editar', changedFields(mod, hashPayload(mod, before, deps.cipher, ''), payload), before)
        return after
      },
    })
  }

  async remove (em: EntityManager, caller: Caller, id: string, guard: RowGuard, expectedVersion?: number): Promise<Row> {
    return this.change(em, caller, id, guard, {
      action: 'eliminar',
      live: true,
      ...(expectedVersion !== undefined && { expectedVersion }),
      write: (tem, before) => this.markDeleted(tem, caller, before, nowSeconds(), 'eliminar'),
    })
  }

  /** Undoes a soft delete (docs/user-guide.md "Concurrency, delete and restore"). */
  async restore (em: EntityManager, caller: Caller, id: string, guard: RowGuard): Promise<Row> {
    return this.change(em, caller, id, guard, {
      action: 'restaurar',
      live: false,
      write: async (tem, before) => before._deleted === null ? undefined : this.markDeleted(tem, caller, before, null, 'restaurar'),
    })
  }

  /** Sets or clears `_deleted` as a new version (delete, restore). */
  private async markDeleted (tem: EntityManager, caller: Caller, before: Row, deleted: Date | null, accion: 'eliminar' | 'restaurar'): Promise<Row> {
    const now = nowSeconds()
    const changes = { _deleted: deleted, _modified: now, _modified_by: caller.id, _version: (before._version as number) + 1 }
    const after: Row = { ...before, ...changes }
    this.rows.seal(after, before._hash as string)
    await tem.nativeUpdate(this.entity, { _id: before._id }, { ...changes, _hash: after._hash })
    await appendVersion(tem, this.mod, after, accion, [], before)
    return after
  }

  async list (em: EntityManager, where: Where, page: ListPageOptions & { columns?: readonly string[] }): Promise<{ rows: Row[], total: number }> {
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

  cursor (em: EntityManager, where: Where, q: Pick<ListQuery, 'orderBy' | 'search'> & { columns?: readonly string[] | undefined }): Promise<RowCursor> {
    return openRowCursor(em, this.entity, where, { orderBy: q.orderBy, search: q.search, batchSize: EXPORT_BATCH, ...(q.columns !== undefined && { columns: q.columns }) })
  }
}
