/**
 * Many new records of one module at once, for an import (docs/user-guide.md
 * "Import (importar)"): each one as a POST would store it — the `before`
 * hooks, references to live records, unique values free (also between the
 * rows themselves), its id, seal (`_hash`) and first history entry, the
 * `inside` and `after` hooks — but all in one transaction, ids drawn as
 * one block in file order and the rows written a batch per statement
 * (db/insert-with-history.ts). Problems are reported per row rather than
 * thrown, so a dry run (`simular`) lists every one.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Caller } from '../../core/access.js'
import { AppError, type ErrorDetail } from '../../core/errors.js'
import { typeOf } from '../../core/field-types/index.js'
import { sequenceOf } from '../../core/ids.js'
import { isUniqueViolationOf } from '../../core/postgres-errors.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { blindIndexColumn, valueColumn } from '../../db/columns.js'
import { boundPerRow, insertManyWithHistory, insertWithHistorySql, type InsertColumn } from '../../db/insert-with-history.js'
import { entityName, type Row } from '../../db/module-entity.js'
import { findRows } from '../../db/row-query.js'
import { inTransaction } from '../../db/transaction.js'
import { versionEntry } from '../history.js'
import type { WriteEvent } from '../hooks.js'
import { drawIds } from '../ids.js'
import type { ColumnValue } from '../normalize.js'
import type { NewRecord, RowProblem } from './module-storage.js'
import { hashPasswords, type RowBuilder } from './row-builder.js'
import type { StorageDeps } from './sql-module-storage.js'

/** Values per `in (…)` list of a check. */
const CHECK_CHUNK = 1000
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
}

/** Every TURN records a loop over an import's records lets the event loop answer other requests (docs/user-guide.md "Import (importar)"). */
const TURN = 500
async function turn (i: number): Promise<void> {
  if (i > 0 && i % TURN === 0) await new Promise((resolve) => setImmediate(resolve))
}

const problemsOf = (fila: number, err: unknown): RowProblem[] => {
  if (!(err instanceof AppError)) throw err
  return err.detalles === undefined ? [{ fila, campo: '', mensaje: err.message }] : err.detalles.map((d: ErrorDetail) => ({ fila, ...d }))
}

export class BulkCreate {
  private readonly statements = new Map<number, string>()
  private readonly batch: number

  constructor (private readonly mod: ModuleDef, private readonly deps: StorageDeps, private readonly parts: BulkParts) {
    this.batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(MAX_BOUND / boundPerRow(parts.insertColumns))))
  }

  /** The `before` hooks of each record (which may refuse it) and unique values repeated between records. */
  async prepare (caller: Caller, records: readonly NewRecord[]): Promise<RowProblem[]> {
    const problems: RowProblem[] = []
    for (const [i, r] of records.entries()) {
      await turn(i)
      const event: WriteEvent = { module: this.mod, action: 'crear', caller, values: r.values }
      try { await this.deps.hooks.emit('before', event) } catch (err) { problems.push(...problemsOf(r.fila, err)) }
    }
    for (const f of this.mod.fields.filter((x) => x.unique)) {
      const first = new Map<string, number>()
      for (const [i, r] of records.entries()) {
        await turn(i)
        const v = r.values.get(f)
        if (v === null || v === undefined) continue
        const key = this.uniqueKey(f, v)
        const seen = first.get(key)
        if (seen === undefined) first.set(key, r.fila)
        else problems.push({ fila: r.fila, campo: f.name, mensaje: `repite el valor de la fila ${seen}` })
      }
    }
    return problems
  }

  /** Problems only the database shows: references to records that are not live, unique values already stored. */
  async check (em: EntityManager, records: readonly NewRecord[]): Promise<RowProblem[]> {
    const problems: RowProblem[] = []
    for (const f of this.mod.fields) {
      for (const kind of ['ref', 'unique'] as const) {
        if (kind === 'ref' ? f.ref === undefined : !f.unique) continue
        const wanted = new Map<string, { value: ColumnValue, records: NewRecord[] }>()
        for (const [i, r] of records.entries()) {
          await turn(i)
          const v = r.values.get(f)
          if (v === null || v === undefined) continue
          const key = kind === 'ref' ? v as string : this.uniqueKey(f, v)
          const entry = wanted.get(key)
          if (entry === undefined) wanted.set(key, { value: f.encrypted ? key : v, records: [r] })
          else entry.records.push(r)
        }
        const found = await this.stored(em, f, kind, [...wanted.values()].map((w) => w.value))
        for (const [key, { records: rs }] of wanted) {
          if (kind === 'ref' && !found.has(key)) {
            const target = this.deps.registry.byName.get(f.ref!)!
            for (const r of rs) problems.push({ fila: r.fila, campo: f.name, mensaje: `no existe ${target.label} con id ${key}` })
          }
          if (kind === 'unique' && found.has(key)) for (const r of rs) problems.push({ fila: r.fila, campo: f.name, mensaje: 'ya existe un registro con este valor' })
        }
      }
    }
    return problems
  }

  /**
   * Writes every record in one transaction after checking them in it; any
   * problem rolls everything back (400 with every problem), and so does
   * the client's going away (`signal`), checked before each batch and
   * before the commit. Returns the stored rows in file order.
   */
  async create (em: EntityManager, caller: Caller, records: readonly NewRecord[], opts: CreateManyOptions = {}): Promise<Row[]> {
    const { onProgress, signal } = opts
    const stored: Array<Awaited<ReturnType<typeof hashPasswords>>> = []
    for (const [i, r] of records.entries()) {
      await turn(i)
      stored.push(await hashPasswords(r.values))
    }
    let floor: number | undefined
    for (let attempt = 1; ; attempt++) {
      let drawn: string[] = []
      try {
        const rows = await inTransaction(em, async (tem) => {
          const problems = await this.check(tem, records)
          if (problems.length > 0) throw new ImportRefused(problems)
          drawn = await drawIds(tem, this.mod, this.deps.sequences, this.deps.timeZone, records.length, floor)
          const out: Row[] = []
          for (let i = 0; i < records.length; i += this.batch) {
            stopIfGone(signal)
            const slice = stored.slice(i, i + this.batch)
            const made = slice.map((values, j) => this.parts.rows.newRow(drawn[i + j]!, values, caller))
            await insertManyWithHistory(tem, this.statement(made.length), this.parts.insertColumns, made.map((m) => m.row), made.map((m) => versionEntry(this.mod, m.row, 'crear', m.campos)))
            for (const [j, m] of made.entries()) {
              out.push(m.row)
              if (this.deps.hooks.has(this.mod.name, 'inside')) await this.deps.hooks.emit('inside', { module: this.mod, action: 'crear', caller, values: records[i + j]!.values, after: m.row, em: tem })
            }
            onProgress?.(out.length, records.length)
          }
          stopIfGone(signal)
          return out
        })
        for (const [i, row] of rows.entries()) {
          await turn(i)
          await this.deps.hooks.emit('after', { module: this.mod, action: 'crear', caller, values: records[i]!.values, after: row })
        }
        return rows
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

  private statement (rows: number): string {
    let sql = this.statements.get(rows)
    if (sql === undefined) {
      sql = insertWithHistorySql(this.mod.table, this.parts.insertColumns, rows)
      this.statements.set(rows, sql)
    }
    return sql
  }

  /** How a unique value is compared: an encrypted one by its blind index, as the database holds it. */
  private uniqueKey (f: FieldDef, v: ColumnValue): string {
    if (f.encrypted) return this.deps.cipher.blindIndex(this.mod.name, f.name, typeOf(f).toPlaintext(v))
    return typeof v === 'string' ? v : JSON.stringify(v)
  }

  /** Which of `values` the database holds (as keys): live target ids of a reference, or values of a unique field (blind indexes of an encrypted one). */
  private async stored (em: EntityManager, f: FieldDef, kind: 'ref' | 'unique', values: readonly ColumnValue[]): Promise<Set<string>> {
    const found = new Set<string>()
    const target = kind === 'ref' ? this.deps.registry.byName.get(f.ref!)! : this.mod
    const column = kind === 'ref' ? '_id' : f.encrypted ? blindIndexColumn(f) : valueColumn(f)
    for (let i = 0; i < values.length; i += CHECK_CHUNK) {
      const chunk = values.slice(i, i + CHECK_CHUNK)
      const rows = await findRows(em, entityName(target), kind === 'ref' ? { _id: { $in: chunk }, _deleted: null } : { [column]: { $in: chunk } }, {})
      for (const row of rows) {
        const v = row[column] as ColumnValue
        found.add(kind === 'ref' || f.encrypted ? v as string : this.uniqueKey(f, v))
      }
    }
    return found
  }
}

/** How an import's records are stored: progress after each batch, and the signal of the client's going away. */
export interface CreateManyOptions {
  readonly onProgress?: (done: number, total: number) => void
  readonly signal?: AbortSignal
}

/** The error of an import whose client went away: nothing written; no one reads the answer. */
export function clientGone (): AppError {
  return new AppError('PETICION_MAL_FORMADA', [{ campo: 'body', mensaje: 'el cliente cerró la conexión antes de la respuesta: no se ha escrito nada' }])
}

/** Throws clientGone() once `signal` is aborted. */
export function stopIfGone (signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw clientGone()
}

/** An import that found problems in its transaction: nothing was written; the records layer reports them. */
export class ImportRefused extends Error {
  constructor (readonly problems: RowProblem[]) {
    super('import refused')
    this.name = 'ImportRefused'
  }
}
