/**
 * An import (docs/user-guide.md "Import (importar)"): every row of a CSV or
 * NDJSON body validated exactly as a POST's body — the module's create
 * schema (Ajv, handed in as `validate`), then records/normalize.ts, the
 * `before` hooks, references and unique values, also between the rows —
 * and every problem reported by row and field. A dry run (`simular`)
 * writes nothing and answers the report; otherwise every row is created in
 * one transaction (records/storage/bulk-create.ts) or, on any problem,
 * none is and the answer is 400 `Datos inválidos` with the same problems
 * in `detalles` (`campo`: `fila 3: tipo`). What a CSV's reading left out
 * without a problem (files: records/import-file-fields.ts) is said in
 * `avisos`, on both answers.
 *
 * Bounded: past `maxRows` records the import stops at once with 413
 * `Demasiadas filas` (the rest of the body unread); the reading yields to
 * the event loop every YIELD_EVERY rows so other requests keep being
 * answered. Memory does not grow with the file: rows are checked a batch
 * at a time as they arrive and the valid ones kept in an encrypted
 * temporary file (records/import-spool.ts) until the body has ended, so
 * the write's transaction (and its database connection) is only taken
 * once the client has sent everything; what is held per row is its id and
 * the first row of each unique value, with at most MAX_PROBLEMS problems
 * (records/import-report.ts). A `signal` aborted (the client went away)
 * stops the import and rolls back its transaction before the commit.
 */
import type { Db } from '../db/statement.js'
import type { Caller } from '../core/access.js'
import { AppError, type ErrorDetail } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import type { Separator } from './csv-dialect.js'
import { importSource, type ImportFormat } from './import-source.js'
import { ProblemList, refusal, type ImportReport } from './import-report.js'
import type { ImportEncoding } from './import-text.js'
import { normalizeBody } from './normalize.js'
import { holdsFileObjects, resolveFileItems } from './files/file-items.js'
import { FirstRows } from './storage/bulk-checks.js'
import { clientGone, ImportRefused, stopIfGone } from './storage/bulk-create.js'
import { ImportSpool } from './import-spool.js'
import type { ModuleStorage, NewRecord, RowProblem } from './storage/module-storage.js'

export { MAX_PROBLEMS, refusal, type ImportReport } from './import-report.js'

/** Rows read between two yields to the event loop (a few milliseconds of work). */
const YIELD_EVERY = 200

/** A row's problems under the module's create schema, worded as a POST's 400 (empty: none). */
export type RowValidator = (body: Record<string, unknown>) => ErrorDetail[]

export interface ImportRequest {
  readonly input: AsyncIterable<Buffer | string>
  readonly format: ImportFormat
  /** CSV only: the separator; found in the header line when absent. */
  readonly separador?: Separator
  /** Default UTF-8 (records/import-text.ts). */
  readonly encoding?: ImportEncoding
  readonly simular: boolean
  readonly validate: RowValidator
  /** Most records taken (IMPORT_MAX_ROWS): one more is 413 `Demasiadas filas`. */
  readonly maxRows: number
  /** Aborted when the client is gone: nothing is committed after it. */
  readonly signal?: AbortSignal
  /** After each row read and validated (the command line's progress). */
  readonly onRow?: (filas: number) => void
  /** After each batch written. */
  readonly onWrite?: (done: number, total: number) => void
}

/** A committed import: how many records, their ids in file order, and its notes (as the report's). */
export interface ImportDone {
  filas: number
  creados: number
  ids: string[]
  avisos?: RowProblem[]
}

export type ImportAnswer = { simulado: true, informe: ImportReport } | { simulado: false, hecho: ImportDone }

export interface ImportContext {
  readonly em: Db
  readonly caller: Caller
  readonly timeZone: string
}

/** The problems of one row before the database is asked: its cells, the schema, normalisation. */
function rowProblems (mod: ModuleDef, body: Record<string, unknown>, early: readonly ErrorDetail[], validate: RowValidator, timeZone: string): { problems: ErrorDetail[], record?: NewRecord['values'] } {
  if (early.some((p) => p.campo === '')) return { problems: [...early] }
  // A cell that did not convert is left out of the body: not also "es obligatorio".
  const named = new Set(early.map((p) => p.campo))
  const schema = validate(body).filter((p) => !named.has(p.campo))
  if (early.length > 0 || schema.length > 0) return { problems: [...early, ...schema] }
  try {
    // A new record holds no file yet: only URL strings (records/files/file-items.ts).
    if (holdsFileObjects(mod, body)) resolveFileItems(mod, body, () => [])
    return { problems: [], record: normalizeBody(mod, body, 'create', timeZone).values }
  } catch (err) {
    if (err instanceof AppError) return { problems: err.detalles ?? [{ campo: '', mensaje: err.message }] }
    throw err
  }
}

/** 413 for the row past the limit; the caller leaves the rest of the body unread. */
function tooManyRows (max: number): AppError {
  return new AppError('DEMASIADAS_FILAS', [{ campo: 'body', mensaje: `una importación admite como máximo ${max} filas (IMPORT_MAX_ROWS); divida el fichero` }])
}

export async function importRecords (mod: ModuleDef, storage: ModuleStorage, ctx: ImportContext, req: ImportRequest): Promise<ImportAnswer> {
  try {
    return await importAll(mod, storage, ctx, req)
  } catch (err) {
    // The body cut off by the client's going away surfaces as a stream error.
    if (req.signal?.aborted === true && !(err instanceof AppError)) throw clientGone()
    throw err
  }
}

async function importAll (mod: ModuleDef, storage: ModuleStorage, ctx: ImportContext, req: ImportRequest): Promise<ImportAnswer> {
  const problems = new ProblemList()
  const notes: RowProblem[] = []
  const first = new FirstRows()
  const spool = req.simular ? undefined : await ImportSpool.open(mod)
  try {
    let pending: NewRecord[] = []
    // A dry run asks the database batch by batch as it reads; an import keeps the records for its transaction.
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return
      const batch = pending
      pending = []
      problems.addAll(await storage.prepareMany(ctx.caller, batch, first))
      if (spool === undefined) problems.addAll(await storage.checkMany(ctx.em, batch, first))
      else await spool.append(batch)
    }
    let filas = 0
    for await (const row of importSource(mod, req.input, { format: req.format, ...(req.separador !== undefined && { separador: req.separador }), ...(req.encoding !== undefined && { encoding: req.encoding }) })) {
      if (row.header === true) {
        for (const p of row.problems) problems.add({ fila: row.fila, ...p }, true)
        for (const n of row.notes ?? []) notes.push({ fila: row.fila, ...n })
        continue
      }
      if (++filas > req.maxRows) throw tooManyRows(req.maxRows)
      const { problems: found, record } = rowProblems(mod, row.body, row.problems, req.validate, ctx.timeZone)
      if (record !== undefined) pending.push({ fila: row.fila, values: record })
      else for (const p of found) problems.add({ fila: row.fila, ...p })
      req.onRow?.(filas)
      if (pending.length >= storage.importBatch) await flush()
      if (filas % YIELD_EVERY === 0) {
        await new Promise((resolve) => setImmediate(resolve))
        stopIfGone(req.signal)
      }
    }
    await flush()
    if (filas === 0 && problems.size === 0) throw new AppError('DATOS_REQUERIDOS', [{ campo: 'body', mensaje: 'el fichero no tiene filas' }])
    const avisos = notes.length > 0 ? { avisos: notes } : {}
    if (spool === undefined) return { simulado: true, informe: { ...problems.report(filas), ...avisos } }
    if (problems.size > 0) {
      // Refused already: the database's problems too, for the whole report.
      for await (const batch of spool.batches(storage.importBatch)) {
        stopIfGone(req.signal)
        problems.addAll(await storage.checkMany(ctx.em, batch, first))
      }
      throw refusal(problems.report(filas))
    }
    try {
      const ids = await storage.createMany(ctx.em, ctx.caller, { count: spool.size, batches: (size) => spool.batches(size) }, {
        onProblems: (ps) => { problems.addAll(ps) },
        ...(req.onWrite !== undefined && { onProgress: req.onWrite }),
        ...(req.signal !== undefined && { signal: req.signal }),
      })
      return { simulado: false, hecho: { filas, creados: ids.length, ids, ...avisos } }
    } catch (err) {
      if (err instanceof ImportRefused) throw refusal(problems.report(filas))
      throw err
    }
  } finally {
    await spool?.remove()
  }
}
