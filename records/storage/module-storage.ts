/**
 * The storage side of one module's records: what is stored and how a
 * write reaches the database, with no permission decided here. The
 * caller's records service (records/records-service.ts) decides what the
 * caller may see and change and hands that in: `visible`, the condition
 * of the rows the caller may see, and a RowGuard for a change. Every
 * write is one transaction (or one statement) with its history entry, its
 * `_hash` and the hook bus; new records, one or many, take one write path
 * (create-path.ts). Knows nothing of HTTP; returns stored rows,
 * throws AppErrors. Implemented by sql-module-storage.ts.
 */
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import type { FieldDef } from '../../core/registry/types.js'
import type { Row } from '../../db/module-entity.js'
import type { ErasureCertificate } from '../../db/history-entity.js'
import type { RowCursor } from '../../db/row-cursor.js'
import type { ListQuery } from '../list-query.js'
import type { ColumnValue } from '../normalize.js'
import type { Where } from '../scope.js'
import type { FirstRows } from './bulk-checks.js'
import type { CreateManyOptions, RecordBatches } from './bulk-create.js'

/** What one change may reach, decided by the caller's access. */
export interface RowGuard {
  /** Condition of the records the caller may see (`ver` scope); undefined: every record. */
  readonly visible?: Where
  /** Whether the action may change this visible row (`editar` / `eliminar` scope). */
  readonly allows: (row: Row) => boolean
}

/**
 * Where a create gets its Db: `em`, the request's own (forked
 * when first asked for, plugins/orm.ts), for a create that runs a
 * transaction; `reads`, when given, for one that is a single statement
 * outside any transaction (nothing of a unit of work is used), so such a
 * create forks none.
 */
export interface CreateEms {
  readonly em: Db
  readonly reads?: Db
}

/**
 * The fields an update writes: the body as sent, or made from the stored
 * row once it is read and locked in the update's transaction (an upload's
 * new file beside those the record holds): the row is read once.
 */
export type ChangeBody = Record<string, unknown> | ((before: Row) => Promise<Record<string, unknown>>)

/** The list options storage applies: order, page, and the full-text search with its relevance order. */
export type ListPageOptions = Pick<ListQuery, 'orderBy' | 'limit' | 'offset' | 'search' | 'rank'>

/** One record of an import (docs/user-guide.md "Import (importar)"): its row in the file and its normalised values. */
export interface NewRecord {
  readonly fila: number
  readonly values: Map<FieldDef, ColumnValue>
}

/** A problem of one row of an import; `campo` empty: the row as a whole. */
export interface RowProblem {
  fila: number
  campo: string
  mensaje: string
}

export interface ModuleStorage {
  /**
   * Stores a new record from a request body (normalised, passwords hashed,
   * encrypted, sealed) with its first history entry, drawing its id from
   * the sequence store. The `before` hooks may refuse it; references must
   * name live records (400) and unique values be free (409). Returns the
   * stored row.
   */
  create (ems: CreateEms, caller: Caller, body: Record<string, unknown>): Promise<Row>

  /** Records per batch of an import: what its checks and writes take at a time. */
  readonly importBatch: number

  /** An import's problems before any write (bulk-checks.ts): the `before` hooks' refusals and unique values repeated between records (`first`, kept across batches). */
  prepareMany (caller: Caller, records: readonly NewRecord[], first: FirstRows): Promise<RowProblem[]>

  /** An import's problems only the database shows: references to records that are not live, unique values taken (at a value's first row in `first`). */
  checkMany (em: Db, records: readonly NewRecord[], first?: FirstRows): Promise<RowProblem[]>

  /**
   * Stores an import's records as creates would, all in one transaction
   * that checks each batch before writing it (problems: `opts.onProblems`,
   * then ImportRefused, nothing written), ids drawn as one block in file
   * order; rolled back if `opts.signal` aborts before the commit. Returns
   * the ids.
   */
  createMany (em: Db, caller: Caller, records: RecordBatches, opts?: CreateManyOptions): Promise<string[]>

  /**
   * Changes the declared fields `body` names of a live record within the
   * guard (404 outside `visible`, 403 when the guard refuses it), at
   * `expectedVersion` when given (409 otherwise), as a new version with
   * its history entry. Returns the row as written.
   */
  update (em: Db, caller: Caller, id: string, body: ChangeBody, guard: RowGuard, expectedVersion?: number): Promise<Row>

  /** Soft-deletes a live record within the guard (404, 403, 409 as update) as a new version. Returns the row as written. */
  remove (em: Db, caller: Caller, id: string, guard: RowGuard, expectedVersion?: number): Promise<Row>

  /**
   * Undoes a soft delete within the guard as a new version; a record that
   * is not deleted is returned as it is (idempotent).
   */
  restore (em: Db, caller: Caller, id: string, guard: RowGuard): Promise<Row>

  /**
   * A live (not deleted) record by id within `visible`, optionally locked
   * for the transaction `em` runs; else 404, the same for a missing id and
   * for one the caller may not see.
   */
  findLive (em: Db, id: string, visible?: Where, lock?: boolean, columns?: readonly string[]): Promise<Row>

  /** The live records among `ids` within `visible`, in no order (related records, records/expansion.ts): one query. */
  findManyLive (em: Db, ids: readonly string[], visible?: Where, columns?: readonly string[]): Promise<Row[]>

  /** A record whether deleted or not (history, verification, restore); else 404 as findLive. */
  findAny (em: Db, id: string, visible?: Where, lock?: boolean): Promise<Row>

  /**
   * Erases personal data (docs/decisions.md "Erasing personal data keeps the
   * chain"): in one transaction, reads and locks the record (deleted or
   * not; 404), asks `certify` for the certificate (which may refuse), nulls
   * its paths in every stored version and writes the erasure as a new
   * version. Returns the row as written.
   */
  erase (em: Db, caller: Caller, id: string, certify: (tem: Db, before: Row) => Promise<ErasureCertificate>): Promise<Row>

  /** A page of the stored rows matching `where` and its exact total. */
  list (em: Db, where: Where, page: ListPageOptions & { columns?: readonly string[] }): Promise<{ rows: Row[], total: number }>

  /** Every stored row matching `where` in order, a batch at a time from one snapshot (an export, db/row-cursor.ts). */
  cursor (em: Db, where: Where, q: Pick<ListQuery, 'orderBy' | 'search'> & { columns?: readonly string[] | undefined }): Promise<RowCursor>
}
