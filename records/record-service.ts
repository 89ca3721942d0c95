/**
 * The storage side of one module's records: create, read, update, soft
 * delete, restore and list stored rows; each write is one transaction that
 * also appends the version to the history and runs the hook bus. It
 * decides no permission: the caller's records service (module-records.ts)
 * hands it the scope conditions (`visible`, a RowGuard) and it applies them
 * in every query. Knows nothing of HTTP; returns stored rows, throws AppErrors.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { hash as argon2Hash } from '@node-rs/argon2'
import { AppError } from '../core/errors.js'
import { canonicalJson } from '../core/canonical.js'
import type { FieldCipher } from '../core/crypto.js'
import type { FieldDef, ModuleDef, Registry } from '../core/registry/types.js'
import { nowSeconds } from '../core/time.js'
import type { SequenceStore } from '../stores/sequences/contract.js'
import { SYSTEM_COLUMNS } from '../core/system-fields.js'
import { entityName, type Row } from '../db/module-entity.js'
import { findRow, findRowsAndCount } from '../db/row-query.js'
import { blindIndexColumn, columnSpec, valueColumn } from '../db/columns.js'
import { insertWithHistory, insertWithHistorySql } from '../db/insert-with-history.js'
import { storedName } from '../db/identifier.js'
import { typeOf } from '../core/field-types/index.js'
import { drawId } from './ids.js'
import { sequenceOf } from '../core/ids.js'
import { isUniqueViolationOf } from '../core/postgres-errors.js'
import { HISTORY_VERSION_UNIQUE } from '../db/history-entity.js'
import type { Caller } from '../core/access.js'
import type { HookBus, WriteEvent } from './hooks.js'
import { and, type Where } from './scope.js'
import type { ListQuery } from './list-query.js'
import { normalizeBody, type ColumnValue } from './normalize.js'
import { hashPayload } from './record-view.js'
import { appendVersion, versionEntry } from './history.js'
import { checkMove } from './state-machine.js'
import { changedFields, sha256 } from './chain.js'
import { inTransaction } from '../db/transaction.js'
import { liveIndexColumn } from '../db/record-indexes.js'

export interface ServiceDeps {
  readonly registry: Registry
  readonly sequences: SequenceStore
  readonly cipher: FieldCipher
  readonly timeZone: string
  readonly hooks: HookBus
}

/** What one operation may reach, decided by the caller's access. */
export interface RowGuard {
  /** Condition of the records the caller may see (`ver` scope); undefined: every record. */
  readonly visible?: Where
  /** Whether the action may change this visible row (`editar` / `eliminar` scope). */
  readonly allows: (row: Row) => boolean
}

/**
 * Where a create gets its EntityManager: `em`, the request's own (forked
 * when first asked for, plugins/orm.ts), for a create that runs a
 * transaction; `reads`, when given, for one that is a single statement
 * outside any transaction (nothing of a unit of work is used), so such a
 * create forks none.
 */
export interface CreateEms {
  readonly em: EntityManager
  readonly reads?: EntityManager
}

/** Draws of an id per create: a collision re-seeds from the database, so a second one needs a concurrent create. */
const ID_ATTEMPTS = 5

export type RecordService = ReturnType<typeof createRecordService>

/** Argon2id with the library's defaults (m=19 MiB, t=2, p=1), as OWASP advises. */
export function hashPassword (plain: string): Promise<string> {
  return argon2Hash(plain, { algorithm: 2 })
}

export function createRecordService (mod: ModuleDef, deps: ServiceDeps) {
  const entity = entityName(mod)
  const columns = [...SYSTEM_COLUMNS, ...mod.fields.flatMap((f) => f.searchable ? [valueColumn(f), blindIndexColumn(f)] : [valueColumn(f)])]
  const jsonColumns = new Set(mod.fields.filter((f) => !f.encrypted && columnSpec(f).type === 'json').map(valueColumn))
  const insertColumns = columns.map((name) => ({ name, json: jsonColumns.has(name) }))
  const insertSql = insertWithHistorySql(mod.table, insertColumns)
  /** A create whose id was taken fails on one of these (the one-statement create meets the history's first). */
  const idKeys = new Set([storedName(`${mod.table}_pkey`), HISTORY_VERSION_UNIQUE])

  /** Ids have one shape; anything else cannot exist and never reaches the database. */
  const ID_SHAPE = new RegExp(`^${mod.prefix}-\\d{4}-\\d{5,}$`)

  /**
   * A record by id (`live`: not deleted) within `visible`, optionally locked
   * for the transaction; else 404, the same for a missing id and for one the
   * caller may not see.
   */
  async function find (em: EntityManager, id: string, opts: { live: boolean, lock: boolean, visible: Where | undefined }): Promise<Row> {
    if (!ID_SHAPE.test(id)) throw new AppError('REGISTRO_NO_ENCONTRADO')
    const where = and(opts.live ? { _id: id, _deleted: null } : { _id: id }, opts.visible)
    const row = await findRow(em, entity, where, opts.lock)
    if (row === null) throw new AppError('REGISTRO_NO_ENCONTRADO')
    return row
  }
  const findLive = (em: EntityManager, id: string, visible?: Where, lock = false): Promise<Row> => find(em, id, { live: true, lock, visible })
  /** A record whether deleted or not (history, verification, restore). */
  const findAny = (em: EntityManager, id: string, visible?: Where, lock = false): Promise<Row> => find(em, id, { live: false, lock, visible })

  /** The stored row within the guard's sight (404), which the action may change (403). */
  async function guarded (tem: EntityManager, id: string, guard: RowGuard, live: boolean): Promise<Row> {
    const row = await find(tem, id, { live, lock: true, visible: guard.visible })
    if (!guard.allows(row)) throw new AppError('SIN_PERMISOS')
    return row
  }

  /** Every ref must name a live record of its module (docs/administrator-guide.md "modules.yaml reference"). */
  async function checkRefs (em: EntityManager, values: Map<FieldDef, ColumnValue>): Promise<void> {
    for (const [f, v] of values) {
      if (f.ref === undefined || v === null) continue
      const target = deps.registry.byName.get(f.ref!)!
      const n = await em.count(entityName(target), { _id: v as string, _deleted: null })
      if (n === 0) throw new AppError('DATOS_INVALIDOS', [{ campo: f.name, mensaje: `no existe ${target.label} con id ${String(v)}` }])
    }
  }

  /** Unique values already taken by another record: 409 before an id is drawn. */
  async function checkUnique (em: EntityManager, values: Map<FieldDef, ColumnValue>, selfId?: string): Promise<void> {
    for (const [f, v] of values) {
      if (!f.unique || v === null) continue
      const where = f.encrypted ? { [blindIndexColumn(f)]: deps.cipher.blindIndex(mod.name, f.name, typeOf(f).toPlaintext(v)) } : { [valueColumn(f)]: v }
      const n = await em.count(entity, selfId === undefined ? where : { ...where, _id: { $ne: selfId } })
      if (n > 0) throw new AppError('REGISTRO_DUPLICADO', [{ campo: f.name, mensaje: 'ya existe un registro con este valor' }])
    }
  }

  /**
   * Passwords replaced by their Argon2id hash — done before any transaction
   * opens, so the slow hashing never holds a connection or a row lock.
   */
  async function hashPasswords (values: Map<FieldDef, ColumnValue>): Promise<Map<FieldDef, ColumnValue>> {
    const out = new Map(values)
    for (const [f, v] of values) if (typeOf(f).writeOnly && v !== null) out.set(f, await hashPassword(v as string))
    return out
  }

  /** Column values of the declared fields (passwords already hashed): encrypted and blind-indexed. */
  function toColumns (id: string, values: Map<FieldDef, ColumnValue>): Row {
    const out: Row = {}
    for (const [f, v] of values) {
      if (f.encrypted) {
        const plaintext = v === null ? null : typeOf(f).toPlaintext(v)
        out[valueColumn(f)] = plaintext === null ? null : deps.cipher.encrypt(plaintext, id, f.name)
        if (f.searchable) out[blindIndexColumn(f)] = plaintext === null ? null : deps.cipher.blindIndex(mod.name, f.name, plaintext)
        continue
      }
      out[valueColumn(f)] = v
    }
    return out
  }

  /** Sets `_hash` (docs/operator-guide.md "The hash chain") and returns the hashed payload, for change detection. */
  function seal (row: Row, previousHash: string): Record<string, unknown> {
    const payload = hashPayload(mod, row, deps.cipher, previousHash)
    row._hash = sha256(canonicalJson(payload))
    return payload
  }

  function checkVersion (row: Row, expected: number | undefined): void {
    if (expected !== undefined && row._version !== expected) throw new AppError('CONFLICTO_VERSION')
  }

  /** A new row with its system fields, sealed, and the fields its first history entry names. */
  function newRow (id: string, stored: Map<FieldDef, ColumnValue>, caller: Caller): { row: Row, campos: string[] } {
    const now = nowSeconds()
    const base: Row = Object.fromEntries(columns.map((c) => [c, null]))
    const row: Row = { ...base, ...toColumns(id, stored), _id: id, _created: now, _created_by: caller.id, _modified: now, _modified_by: caller.id, _version: 1, _deleted: null }
    const payload = seal(row, '')
    return { row, campos: changedFields(mod, undefined, payload) }
  }

  async function createAlone (em: EntityManager, id: string, caller: Caller, stored: Map<FieldDef, ColumnValue>): Promise<Row> {
    const { row, campos } = newRow(id, stored, caller)
    await insertWithHistory(em, insertSql, insertColumns, row, versionEntry(mod, row, 'crear', campos))
    return row
  }

  async function create (ems: CreateEms, caller: Caller, body: Record<string, unknown>): Promise<Row> {
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
    // Nothing to check or run inside the transaction: the record and its
    // history entry are one statement (db/insert-with-history.ts).
    const alone = !deps.hooks.has(mod.name, 'inside') && ![...values].some(([f, v]) => v !== null && (f.ref !== undefined || f.unique))
    for (let attempt = 1; ; attempt++) {
      try {
        const reads = ems.reads ?? ems.em
        const row = alone ? await createAlone(reads, await draw(reads), caller, stored) : await inTransaction(ems.em, async (tem) => {
          await checkRefs(tem, values)
          await checkUnique(tem, values)
          const { row, campos } = newRow(await draw(tem), stored, caller)
          await tem.insert(entity, row)
          await appendVersion(tem, mod, row, 'crear', campos)
          await deps.hooks.emit('inside', { ...event, after: row, em: tem })
          return row
        })
        await deps.hooks.emit('after', { ...event, after: row })
        return row
      } catch (err) {
        // The id was taken: the counter is behind the table (Redis restored
        // older, or lost while a create was in flight). Re-seed above the
        // collision and the stored ids, and draw again (docs/operator-guide.md "Ids and a Redis restore").
        if (drawn !== undefined && attempt < ID_ATTEMPTS && isUniqueViolationOf(err, idKeys)) {
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
  async function change (em: EntityManager, caller: Caller, id: string, guard: RowGuard, opts: {
    action: WriteEvent['action']
    live: boolean
    expectedVersion?: number
    values?: Map<FieldDef, ColumnValue>
    write: (tem: EntityManager, before: Row) => Promise<Row | undefined>
  }): Promise<Row> {
    const result = await inTransaction(em, async (tem) => {
      const before = await guarded(tem, id, guard, opts.live)
      checkVersion(before, opts.expectedVersion)
      const event: WriteEvent = { module: mod, action: opts.action, caller, before, values: opts.values ?? new Map(), em: tem }
      await deps.hooks.emit('before', event)
      const after = await opts.write(tem, before)
      if (after === undefined) return { before }
      await deps.hooks.emit('inside', { ...event, after })
      return { before, event, after }
    })
    if (result.event === undefined) return result.before
    const { em: _tx, ...event } = result.event
    await deps.hooks.emit('after', { ...event, after: result.after })
    return result.after
  }

  async function update (em: EntityManager, caller: Caller, id: string, body: Record<string, unknown>, guard: RowGuard, expectedVersion?: number): Promise<Row> {
    const { values } = normalizeBody(mod, body, 'update', deps.timeZone)
    const stored = await hashPasswords(values)
    return change(em, caller, id, guard, {
      action: 'editar',
      live: true,
      values,
      ...(expectedVersion !== undefined && { expectedVersion }),
      write: async (tem, before) => {
        await checkRefs(tem, values)
        await checkUnique(tem, values, id)
        const changes = { ...toColumns(id, stored), _modified: nowSeconds(), _modified_by: caller.id, _version: (before._version as number) + 1 }
        const after: Row = { ...before, ...changes }
        if (mod.stateField !== undefined) {
          const state = valueColumn(mod.fieldMap.get(mod.stateField)!)
          checkMove(mod, before[state], after[state], (f) => after[valueColumn(mod.fieldMap.get(f)!)])
        }
        const payload = seal(after, before._hash as string)
        await tem.nativeUpdate(entity, { _id: id }, { ...changes, _hash: after._hash })
        await appendVersion(tem, mod, after, 'editar', changedFields(mod, hashPayload(mod, before, deps.cipher, ''), payload))
        return after
      },
    })
  }

  async function remove (em: EntityManager, caller: Caller, id: string, guard: RowGuard, expectedVersion?: number): Promise<Row> {
    return change(em, caller, id, guard, {
      action: 'eliminar',
      live: true,
      ...(expectedVersion !== undefined && { expectedVersion }),
      write: (tem, before) => markDeleted(tem, caller, before, nowSeconds(), 'eliminar'),
    })
  }

  /** Sets or clears `_deleted` as a new version (delete, restore). */
  async function markDeleted (tem: EntityManager, caller: Caller, before: Row, deleted: Date | null, accion: 'eliminar' | 'restaurar'): Promise<Row> {
    const now = nowSeconds()
    const changes = { _deleted: deleted, _modified: now, _modified_by: caller.id, _version: (before._version as number) + 1 }
    const after: Row = { ...before, ...changes }
    seal(after, before._hash as string)
    await tem.nativeUpdate(entity, { _id: before._id }, { ...changes, _hash: after._hash })
    await appendVersion(tem, mod, after, accion, [])
    return after
  }

  /**
   * Undoes a soft delete (docs/user-guide.md "Concurrency, delete and restore"): clears `_deleted` as a new version. A
   * record that is not deleted is returned as it is (idempotent).
   */
  async function restore (em: EntityManager, caller: Caller, id: string, guard: RowGuard): Promise<Row> {
    return change(em, caller, id, guard, {
      action: 'restaurar',
      live: false,
      write: async (tem, before) => before._deleted === null ? undefined : markDeleted(tem, caller, before, null, 'restaurar'),
    })
  }

  /** A page and its exact total, with the search conditions and relevance order of the query. */
  async function list (em: EntityManager, where: Where, page: Pick<ListQuery, 'orderBy' | 'limit' | 'offset' | 'search' | 'rank'>): Promise<{ rows: Row[], total: number }> {
    const [rows, total] = await findRowsAndCount(em, entity, where, {
      orderBy: page.orderBy,
      limit: page.limit,
      offset: page.offset,
      search: page.search,
      ...(page.rank !== undefined && { rank: page.rank }),
      onLiveIndex: liveIndexColumn(mod, where, page.orderBy) !== undefined,
    })
    return { rows, total }
  }

  return { create, update, remove, restore, findLive, findAny, list }
}
