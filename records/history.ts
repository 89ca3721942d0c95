/**
 * Append-only history (docs/operator-guide.md "History and verification"): every version of every record — create,
 * each update, delete, restore — as the full stored row (encrypted values
 * stay encrypted), written in the same transaction as the change. One table
 * for all modules, so a module added to modules.yaml needs nothing more.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { ModuleDef } from '../core/registry/types.js'
import type { Row } from '../db/module-entity.js'
import { HistoryEntity, type HistoryAction, type HistoryEntry, type HistoryRow } from '../db/history-entity.js'
import { currentSeal, sealOf } from './integrity/seal-format.js'

export type { HistoryAction, HistoryEntry, HistoryRow } from '../db/history-entity.js'

/** The history entry of one version of a row: its type is the entity's written columns (db/history-entity.ts), so none can be left out or added. */
export function versionEntry (mod: ModuleDef, row: Row, accion: HistoryAction, campos: string[]): HistoryEntry {
  return {
    modulo: mod.name,
    registro: row._id as string,
    version: row._version as number,
    accion,
    usuario: row._modified_by as string,
    fecha: row._modified as Date,
    hash: row._hash as string,
    campos,
    datos: row,
    sello: currentSeal(mod).format,
  }
}

export async function appendVersion (em: EntityManager, mod: ModuleDef, row: Row, accion: HistoryAction, campos: string[]): Promise<void> {
  await em.insert(HistoryEntity, versionEntry(mod, row, accion, campos))
}

/** Every stored version of a record, oldest first. */
export async function versionsOf (em: EntityManager, mod: ModuleDef, id: string): Promise<HistoryRow[]> {
  return em.find(HistoryEntity, { modulo: mod.name, registro: id }, { orderBy: { version: 'asc' } })
}

/**
 * What an auditor needs, beside the record, to recompute one version's
 * `_hash` (docs/operator-guide.md "The hash chain"): its seal format and, for format 1, the
 * fields it was sealed with.
 */
export function sealInfo (mod: ModuleDef, entry: HistoryRow): { sello: number, campos_sellados?: string[] } {
  const seal = sealOf(mod, entry)
  return seal.format === 1 ? { sello: 1, campos_sellados: [...seal.fields] } : { sello: seal.format }
}
