/**
 * Append-only history (docs/operator-guide.md "History and verification"): every version of every record — create,
 * each update, delete, restore — as an entry written in the same
 * transaction as the change. Each version's full stored row (encrypted
 * values stay encrypted) is kept once: the entry of the version after it
 * carries it (`anterior`), and the newest version is the live row itself
 * (docs/decisions.md "Each version stored once"). One table for all
 * modules, so a module added to modules.yaml needs nothing more.
 */
import type { Db } from '../db/statement.js'
import type { ModuleDef } from '../core/registry/types.js'
import type { Row } from '../db/module-entity.js'
import type { ErasureCertificate, HistoryAction, HistoryEntry, HistoryRow } from '../db/history-entity.js'
import { appendHistoryEntry, historyEntries } from '../db/history-statements.js'
import { currentSeal, sealOf } from './integrity/seal-format.js'

export type { ErasureCertificate, HistoryAction, HistoryEntry, HistoryRow } from '../db/history-entity.js'

/**
 * The history entry of one version of a row, carrying the stored row of the
 * version before it (`before`, none for a create): its type is the entity's
 * written columns (db/history-entity.ts), so none can be left out or added.
 */
export function versionEntry (mod: ModuleDef, row: Row, accion: HistoryAction, campos: string[], before: Row | null = null, supresion: ErasureCertificate | null = null): HistoryEntry {
  return {
    modulo: mod.name,
    registro: row._id as string,
    version: row._version as number,
    accion,
    usuario: row._modified_by as string,
    fecha: row._modified as Date,
    hash: row._hash as string,
    campos,
    datos: null,
    anterior: before,
    sello: currentSeal(mod).format,
    supresion,
  }
}

/** Appends the entry of `row`'s new version; `before`: the stored row it replaces. */
export async function appendVersion (em: Db, mod: ModuleDef, row: Row, accion: HistoryAction, campos: string[], before: Row, supresion: ErasureCertificate | null = null): Promise<void> {
  await appendHistoryEntry(em, versionEntry(mod, row, accion, campos, before, supresion))
}

/** A history entry with the stored row of its version. */
export interface StoredVersion extends HistoryRow {
  /** The version's stored row; `{}` when the database holds it nowhere (a version or live row deleted or rolled back behind the service's back: verification reports it). */
  datos: Row
}

/**
 * Every stored version of a record, oldest first, each with its stored
 * row: its own `datos` (entries written before `anterior`), else the live
 * row when that is the version, else the next entry's `anterior`. `live`
 * is the record as the caller read it; a write that landed after that read
 * makes the history reach past it, and `reread` (the live row as it is
 * now) then gives the newest version's row.
 */
export async function versionsOf (em: Db, mod: ModuleDef, live: Row, reread?: () => Promise<Row>): Promise<StoredVersion[]> {
  const entries = await historyEntries(em, mod.name, live._id as string)
  let current = live
  const newest = entries.at(-1)
  if (reread !== undefined && newest !== undefined && newest.datos === null && newest.version > (current._version as number)) current = await reread()
  return entries.map((e, i) => {
    const next = entries[i + 1]
    // The live row before the next entry's `anterior`: a write changes both in one transaction, so an entry past the
    // version the live row claims was put there behind the service's back, and its `anterior` must not stand in for
    // the live row (integrity.test.ts "an inserted or renumbered history row": broken at the inserted version).
    const datos = e.datos ??
      (current._version === e.version ? current : null) ??
      (next !== undefined && next.version === e.version + 1 ? next.anterior : null)
    return { ...e, datos: datos ?? {} }
  })
}

/**
 * A history entry's stored rows (`datos`, `anterior`) with `changes(row)`
 * applied to each it holds: the columns to update, or undefined when none
 * changes (key rotation, blind-index upgrade).
 */
export function storedRowsChanged (entry: Pick<HistoryRow, 'datos' | 'anterior'>, changes: (row: Row) => Row): Partial<Pick<HistoryRow, 'datos' | 'anterior'>> | undefined {
  const update: Partial<Pick<HistoryRow, 'datos' | 'anterior'>> = {}
  for (const column of ['datos', 'anterior'] as const) {
    const stored = entry[column]
    if (stored === null) continue
    const changed = changes(stored)
    if (Object.keys(changed).length > 0) update[column] = { ...stored, ...changed }
  }
  return Object.keys(update).length > 0 ? update : undefined
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
