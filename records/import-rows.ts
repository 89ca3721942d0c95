/**
 * An import (docs/user-guide.md "Import (importar)"): every row of a CSV or
 * NDJSON body validated exactly as a POST's body — the module's create
 * schema (Ajv, handed in as `validate`), then records/normalize.ts, the
 * `before` hooks, references and unique values, also between the rows —
 * and every problem reported by row and field. A dry run (`simular`)
 * writes nothing and answers the report; otherwise every row is created in
 * one transaction (records/storage/bulk-create.ts) or, on any problem,
 * none is and the answer is 400 `Datos inválidos` with the same problems
 * in `detalles` (`campo`: `fila 3: tipo`).
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Caller } from '../core/access.js'
import { AppError, type ErrorDetail } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import type { Separator } from './csv-dialect.js'
import { importSource, type ImportFormat } from './import-source.js'
import { normalizeBody } from './normalize.js'
import { holdsFileObjects, resolveFileItems } from './files/file-items.js'
import { ImportRefused } from './storage/bulk-create.js'
import type { ModuleStorage, NewRecord, RowProblem } from './storage/module-storage.js'

/** Problems listed at most; `errores_omitidos` counts the rest. */
export const MAX_PROBLEMS = 1000

/** A row's problems under the module's create schema, worded as a POST's 400 (empty: none). */
export type RowValidator = (body: Record<string, unknown>) => ErrorDetail[]

export interface ImportRequest {
  readonly input: AsyncIterable<Buffer | string>
  readonly format: ImportFormat
  /** CSV only: the separator; found in the header line when absent. */
  readonly separador?: Separator
  readonly simular: boolean
  readonly validate: RowValidator
  /** After each row read and validated (the command line's progress). */
  readonly onRow?: (filas: number) => void
  /** After each batch written. */
  readonly onWrite?: (done: number, total: number) => void
}

/** A dry run's answer, and the problems of a refused import. */
export interface ImportReport {
  filas: number
  validas: number
  errores: RowProblem[]
  errores_omitidos: number
}

/** A committed import: how many records, their ids in file order. */
export interface ImportDone {
  filas: number
  creados: number
  ids: string[]
}

export type ImportAnswer = { simulado: true, informe: ImportReport } | { simulado: false, hecho: ImportDone }

export interface ImportContext {
  readonly em: EntityManager
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

function report (filas: number, records: readonly NewRecord[], rowsWithProblems: number, problems: RowProblem[]): ImportReport {
  const sorted = problems.sort((a, b) => a.fila - b.fila)
  const bad = new Set(sorted.map((p) => p.fila))
  return { filas, validas: filas - rowsWithProblems - records.filter((r) => bad.has(r.fila)).length, errores: sorted.slice(0, MAX_PROBLEMS), errores_omitidos: Math.max(0, sorted.length - MAX_PROBLEMS) }
}

/** The 400 of an import with problems: each `campo` names its row. */
export function refusal (r: ImportReport): AppError {
  return new AppError('DATOS_INVALIDOS', r.errores.map((p) => ({ campo: p.campo === '' ? `fila ${p.fila}` : `fila ${p.fila}: ${p.campo}`, mensaje: p.mensaje })))
}

export async function importRecords (mod: ModuleDef, storage: ModuleStorage, ctx: ImportContext, req: ImportRequest): Promise<ImportAnswer> {
  const problems: RowProblem[] = []
  const records: NewRecord[] = []
  let filas = 0
  let rejected = 0
  for await (const row of importSource(mod, req.input, { format: req.format, ...(req.separador !== undefined && { separador: req.separador }) })) {
    if (row.header === true) { problems.push(...row.problems.map((p) => ({ fila: row.fila, ...p }))); continue }
    filas++
    const { problems: found, record } = rowProblems(mod, row.body, row.problems, req.validate, ctx.timeZone)
    if (record !== undefined) records.push({ fila: row.fila, values: record })
    else { rejected++; problems.push(...found.map((p) => ({ fila: row.fila, ...p }))) }
    req.onRow?.(filas)
  }
  problems.push(...await storage.prepareMany(ctx.caller, records))
  // With problems already, the database's are added for the whole report; else they are asked in the write's transaction.
  if (req.simular || problems.length > 0) problems.push(...await storage.checkMany(ctx.em, records))
  if (req.simular) return { simulado: true, informe: report(filas, records, rejected, problems) }
  if (filas === 0 && problems.length === 0) throw new AppError('DATOS_REQUERIDOS', [{ campo: 'body', mensaje: 'el fichero no tiene filas' }])
  if (problems.length > 0) throw refusal(report(filas, records, rejected, problems))
  try {
    const rows = await storage.createMany(ctx.em, ctx.caller, records, req.onWrite)
    return { simulado: false, hecho: { filas, creados: rows.length, ids: rows.map((r) => r._id as string) } }
  } catch (err) {
    if (err instanceof ImportRefused) throw refusal(report(filas, records, rejected, err.problems))
    throw err
  }
}
