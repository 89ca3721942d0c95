/**
 * The upgrade to one blind-index key per field (docs/user-guide.md
 * "Encryption"). Indexes stored under the old single key are recomputed
 * from the decrypted values — in the module tables and in every history
 * snapshot — in ONE transaction, under an advisory lock, before the
 * instance serves; then the scheme is recorded in `sys_claves`. So every
 * search sees either all old indexes (old code) or all new ones (new
 * code), never a mix; instances starting together wait for the lock and
 * find the work done. Blind indexes are not part of `_hash`, so no hash,
 * version or global-chain entry changes.
 *
 * Run by `npm run migrate` (with progress) and by the start when the
 * database has not been upgraded yet; a database already upgraded costs
 * one query.
 */
import type { Db } from '../../db/statement.js'
import type { FieldCipher } from '../../core/crypto.js'
import type { ModuleDef, Registry } from '../../core/registry/types.js'
import { waitForTransactionLock } from '../../db/advisory-lock.js'
import { blindIndexColumn } from '../../db/columns.js'
import { storedRowsChanged } from '../history.js'
import { entityName, type Row } from '../../db/module-entity.js'
import { BLIND_INDEX_SCHEME, blindIndexScheme, recordBlindIndexScheme } from '../../db/system-keys.js'
import { countRows, findRows } from '../../db/row-query.js'
import { countHistoryEntries, historyEntriesAfter, rewriteHistoryEntry, rewriteModuleRow } from '../../db/stored-value-rewrites.js'
import { inTransaction } from '../../db/transaction.js'
import { refreshed, type RotationProgress } from './key-rotation.js'

/** Any constant shared by all instances (the schema sync has its own). */
const LOCK_KEY = 720_093

export interface IndexUpgradeOptions {
  /** Take the advisory lock (PostgreSQL; embedded PGlite serves one process). */
  lock: boolean
  batchSize?: number
  /** After each batch: which table, and how far. */
  onProgress? (table: string, p: RotationProgress): void
}

/** Rows looked at and rewritten per table; undefined when the scheme was already in force. */
export type IndexUpgradeReport = Record<string, { scanned: number, rewritten: number }> | undefined

const searchable = (mod: ModuleDef): boolean => mod.fields.some((f) => f.searchable)

/** Only the blind-index columns of `changes` that `row` holds (a value that does not decrypt keeps its index: /verificar reports it). */
function indexChanges (mod: ModuleDef, row: Row, id: string, cipher: FieldCipher): Row {
  const all = refreshed(mod, row, id, cipher, true, true)
  const out: Row = {}
  for (const f of mod.fields) {
    const col = blindIndexColumn(f)
    if (f.searchable && Object.hasOwn(all, col) && Object.hasOwn(row, col)) out[col] = all[col]
  }
  return out
}

export async function upgradeBlindIndexes (em: Db, registry: Registry, cipher: FieldCipher, keys: readonly Buffer[], opts: IndexUpgradeOptions): Promise<IndexUpgradeReport> {
  const batchSize = opts.batchSize ?? 500
  return inTransaction(em.fork(), async (tem) => {
    if (opts.lock) await waitForTransactionLock(tem, LOCK_KEY)
    if (await blindIndexScheme(tem, keys) >= BLIND_INDEX_SCHEME) return undefined
    const report: NonNullable<IndexUpgradeReport> = {}
    const mods = registry.modules.filter(searchable)
    for (const mod of mods) {
      const entity = entityName(mod)
      const p: RotationProgress = { scanned: 0, rewritten: 0, total: await countRows(tem, entity, {}) }
      let last = ''
      for (;;) {
        // Locked like the service's writes: an old instance's update waits for the commit.
        const rows = await findRows(tem, entity, { _id: { $gt: last } }, { orderBy: [{ _id: 'asc' }], limit: batchSize, lock: true })
        if (rows.length === 0) break
        for (const row of rows) {
          const changes = indexChanges(mod, row, row._id as string, cipher)
          if (Object.keys(changes).length > 0) p.rewritten += await rewriteModuleRow(tem, entity, row._id, changes)
        }
        p.scanned += rows.length
        last = rows.at(-1)!._id as string
        opts.onProgress?.(mod.name, p)
      }
      if (p.scanned === 0) opts.onProgress?.(mod.name, p)
      report[mod.name] = { scanned: p.scanned, rewritten: p.rewritten }
    }
    // Every stored version keeps its indexes too (/verificar checks them).
    const byName = new Map(mods.map((m) => [m.name, m]))
    const modulos = [...byName.keys()]
    const p: RotationProgress = { scanned: 0, rewritten: 0, total: mods.length === 0 ? 0 : await countHistoryEntries(tem, modulos) }
    let last = '0'
    while (mods.length > 0) {
      const rows = await historyEntriesAfter(tem, last, batchSize, modulos)
      if (rows.length === 0) break
      for (const row of rows) {
        const update = storedRowsChanged(row, (stored) => indexChanges(byName.get(row.modulo)!, stored, row.registro, cipher))
        if (update !== undefined) p.rewritten += await rewriteHistoryEntry(tem, row.id!, update)
      }
      p.scanned += rows.length
      last = rows.at(-1)!.id!
      opts.onProgress?.('sys_historial', p)
    }
    if (p.scanned === 0) opts.onProgress?.('sys_historial', p)
    report.sys_historial = { scanned: p.scanned, rewritten: p.rewritten }
    await recordBlindIndexScheme(tem, keys, BLIND_INDEX_SCHEME)
    return report
  })
}
