/**
 * The statements of the read log (`sys_lecturas`, db/read-log-entity.ts):
 * its rows appended (records/read-log.ts, before the values they log are
 * sent), a page of it for GET /auditoria/lecturas with its total, from one
 * snapshot, and the downloads of one evidence file (records/files/custody.ts).
 */
import { IsolationLevel } from '@mikro-orm/core'
import { ormErrors } from './orm-errors.js'
import type { ReadLogKind, ReadLogRow } from './read-log-entity.js'
import { queryRows, runStatement, type Db } from './statement.js'
import { inTransaction, insideTransaction } from './transaction.js'

const ROW = '(?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?)'
const INSERT = 'insert into "sys_lecturas" ("tipo", "usuario", "fecha", "modulo", "registro", "campos", "ruta", "coincidencias", "filtro") values '

/** Appends `entries` in one statement (none: no statement). A row without `tipo` is a `lectura`, the column's default. */
export async function appendReadLog (db: Db, entries: readonly ReadLogRow[]): Promise<void> {
  if (entries.length === 0) return
  const params: unknown[] = []
  for (const e of entries) params.push(e.tipo ?? 'lectura', e.usuario, e.fecha, e.modulo, e.registro, JSON.stringify(e.campos), e.ruta, e.coincidencias ?? null, e.filtro ?? null)
  await ormErrors(db, runStatement(db, INSERT + Array<string>(entries.length).fill(ROW).join(', '), params))
}

const COLUMNS = '"id", "tipo", "usuario", "fecha", "modulo", "registro", "campos", "ruta", "coincidencias", "filtro"'

type Stored = ReadLogRow & { fecha: Date | string }

function rowsOf (rows: Stored[]): ReadLogRow[] {
  for (const r of rows) r.fecha = new Date(r.fecha)
  return rows
}

/** Which rows of the log a page reads: each present key must match exactly; `since` inclusive, `before` exclusive. */
export interface ReadLogFilter {
  tipo?: ReadLogKind
  usuario?: string
  modulo?: string
  registro?: string
  since?: Date
  before?: Date
}

/**
 * A page of the rows matching `filter`, newest first, and how many match,
 * both from one snapshot: the log grows while it is read (the reader's own
 * reads land in it), and a total counted apart could disagree with its page
 * (docs/decisions.md "The read log's page and its total").
 */
export async function readLogPage (db: Db, filter: ReadLogFilter, limit: number, offset: number): Promise<[ReadLogRow[], number]> {
  const conds: string[] = []
  const params: unknown[] = []
  for (const key of ['tipo', 'usuario', 'modulo', 'registro'] as const) {
    const v = filter[key]
    if (v !== undefined) { conds.push(`"${key}" = ?`); params.push(v) }
  }
  if (filter.since !== undefined) { conds.push('"fecha" >= ?'); params.push(filter.since) }
  if (filter.before !== undefined) { conds.push('"fecha" < ?'); params.push(filter.before) }
  const where = conds.length === 0 ? '' : ` where ${conds.join(' and ')}`
  const read = async (tem: Db): Promise<[ReadLogRow[], number]> => {
    const rows = await queryRows<Stored>(tem, `select ${COLUMNS} from "sys_lecturas"${where} order by "fecha" desc, "id" desc limit ? offset ?`, [...params, limit, offset])
    const [total] = await queryRows<{ n: number }>(tem, `select count(*)::int as "n" from "sys_lecturas"${where}`, params)
    return [rowsOf(rows), total!.n]
  }
  // Inside a caller's transaction, its isolation decides (a savepoint takes none of its own).
  return ormErrors(db, insideTransaction(db) ? read(db) : inTransaction(db, read, { isolationLevel: IsolationLevel.REPEATABLE_READ }))
}

/** The downloads (`descarga`, `acceso`) of file `archivo` of a record, oldest first. */
export async function fileDownloads (db: Db, modulo: string, registro: string, archivo: string): Promise<ReadLogRow[]> {
  return rowsOf(await ormErrors(db, queryRows<Stored>(db,
    `select ${COLUMNS} from "sys_lecturas" where "modulo" = ? and "registro" = ? and "filtro" = ? and "tipo" in ('descarga', 'acceso') order by "fecha" asc, "id" asc`,
    [modulo, registro, archivo])))
}
