/**
 * The statements that rewrite stored values in place, without a new
 * version (records/integrity/key-rotation.ts: values moved to the current
 * key; records/integrity/blind-index-upgrade.ts: indexes recomputed): a
 * module row's columns by id, and the stored rows (`datos`, `anterior`)
 * of history entries read in id order. Written through the entities'
 * metadata, so each column is converted as every other write converts it
 * (a structured array or a stored row as jsonb).
 */
import { HistoryEntity, type HistoryRow } from './history-entity.js'
import type { Row } from './module-entity.js'
import type { Db } from './statement.js'

/** Sets `changes` (row keys) on the row `id` of a module's entity; answers the rows changed (0 or 1). */
export async function rewriteModuleRow (db: Db, entity: string, id: unknown, changes: Row): Promise<number> {
  return db.nativeUpdate(entity, { _id: id }, changes)
}

/** How many history entries there are, of these modules only when `modulos` is given. */
export async function countHistoryEntries (db: Db, modulos?: readonly string[]): Promise<number> {
  return db.count(HistoryEntity, modulos === undefined ? {} : { modulo: { $in: [...modulos] } })
}

/** Up to `limit` history entries after the id `after`, in id order; of these modules only when `modulos` is given. */
export async function historyEntriesAfter (db: Db, after: string, limit: number, modulos?: readonly string[]): Promise<HistoryRow[]> {
  const where = { ...(modulos !== undefined && { modulo: { $in: [...modulos] } }), id: { $gt: after } }
  return db.find(HistoryEntity, where, { orderBy: { id: 'asc' }, limit, disableIdentityMap: true })
}

/** Sets the stored rows of the history entry `id`; answers the rows changed (0 or 1). */
export async function rewriteHistoryEntry (db: Db, id: string, update: Partial<Pick<HistoryRow, 'datos' | 'anterior'>>): Promise<number> {
  return db.nativeUpdate(HistoryEntity, { id }, update)
}
