/**
 * The statements of the history table (`sys_historial`, db/history-entity.ts)
 * that records/history.ts runs: an update's, delete's or restore's entry
 * appended in its transaction, and a record's entries read back. A create
 * writes its entry with the record (db/insert-with-history.ts).
 */
import { HISTORY_WRITTEN_COLUMNS, type HistoryEntry, type HistoryRow } from './history-entity.js'
import { ormErrors } from './orm-errors.js'
import { queryRows, runStatement, type Db } from './statement.js'

const APPEND_SQL = `insert into "sys_historial" (${HISTORY_WRITTEN_COLUMNS.map((c) => `"${c.name}"`).join(', ')}) ` +
  `values (${HISTORY_WRITTEN_COLUMNS.map((c) => c.json ? '?::jsonb' : '?').join(', ')})`

/** Appends one entry (a unique violation, the version's entry written already, raised as the ORM raises it). */
export async function appendHistoryEntry (db: Db, entry: HistoryEntry): Promise<void> {
  const params = HISTORY_WRITTEN_COLUMNS.map((c) => {
    const v = entry[c.name]
    return v === null || v === undefined ? null : c.json ? JSON.stringify(v) : v
  })
  await ormErrors(db, runStatement(db, APPEND_SQL, params))
}

/** Every column but the transaction id (`xid`, read only by the chain's sealer). */
const ENTRIES_SQL = 'select "id", "modulo", "registro", "version", "accion", "usuario", "fecha", "hash", "campos", "datos", "anterior", "sello", "supresion" ' +
  'from "sys_historial" where "modulo" = ? and "registro" = ? order by "version" asc'

/** Every entry of a record, oldest first. */
export async function historyEntries (db: Db, modulo: string, registro: string): Promise<HistoryRow[]> {
  const rows = await ormErrors(db, queryRows<HistoryRow & { fecha: Date | string }>(db, ENTRIES_SQL, [modulo, registro]))
  for (const r of rows) r.fecha = new Date(r.fecha)
  return rows
}

const SEAL_SQL = 'select "hash", (select max("version") from "sys_historial" where "modulo" = ? and "registro" = ?) as "ultima" ' +
  'from "sys_historial" where "modulo" = ? and "registro" = ? and "version" = ?'

/** One version's `_hash` and the record's newest version number, or undefined when the record has no such version. */
export async function versionSeal (db: Db, modulo: string, registro: string, version: number): Promise<{ hash: string, latest: number } | undefined> {
  const [row] = await ormErrors(db, queryRows<{ hash: string, ultima: number | string }>(db, SEAL_SQL, [modulo, registro, modulo, registro, version]))
  return row === undefined ? undefined : { hash: row.hash, latest: Number(row.ultima) }
}
