/**
 * The statements of `sys_puntos_control` (db/global-chain-entity.ts): the signed
 * checkpoints of the global chain's head kept in the database.
 * records/integrity/checkpoints.ts signs them and checks their signatures;
 * the SQL is here.
 */
import { queryRows, runStatement, type Db } from './statement.js'

/** A stored checkpoint as read: `cadena` is null in format 1. */
export interface StoredCheckpoint { seq: string, cabeza: string, fecha: string, firma: string, cadena: string | null }

/** A checkpoint to store. */
export interface NewCheckpoint { seq: number, cabeza: string, fecha: string, firma: string, cadena?: string | undefined }

const STORED = 'select seq, cabeza, fecha, firma, cadena from sys_puntos_control'

/** The checkpoint of the highest seq (the newest stored of them when several share it). */
export async function newestStoredCheckpoint (db: Db): Promise<StoredCheckpoint | undefined> {
  const [row] = await queryRows<StoredCheckpoint>(db, `${STORED} order by seq desc, id desc limit 1`)
  return row
}

/** The nearest stored checkpoint strictly before `seq`. */
export async function storedCheckpointBefore (db: Db, seq: number): Promise<StoredCheckpoint | undefined> {
  const [row] = await queryRows<StoredCheckpoint>(db, `${STORED} where seq < ? order by seq desc, id desc limit 1`, [seq])
  return row
}

/** The nearest stored checkpoint at or after `seq`. */
export async function storedCheckpointFrom (db: Db, seq: number): Promise<StoredCheckpoint | undefined> {
  const [row] = await queryRows<StoredCheckpoint>(db, `${STORED} where seq >= ? order by seq asc, id desc limit 1`, [seq])
  return row
}

/** Stores checkpoints in one statement (none: no statement). */
export async function storeCheckpoints (db: Db, cps: readonly NewCheckpoint[]): Promise<void> {
  if (cps.length === 0) return
  await runStatement(db, `insert into sys_puntos_control (seq, cabeza, fecha, firma, cadena) values ${cps.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
    cps.flatMap((c) => [c.seq, c.cabeza, c.fecha, c.firma, c.cadena ?? null]))
}
