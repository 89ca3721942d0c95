/**
 * Re-encryption of a module's stored values under the current key, and
 * rebuilding of its blind indexes. Works in batches in `_id` order (keyset
 * pagination), one transaction per batch, while the service keeps running:
 * a batch is read under the row locks the service's own writes take, so a
 * concurrent update waits for the batch (or the batch for it) and is never
 * overwritten nor half-rotated.
 * Values already under the current key are skipped, so an interrupted run
 * simply resumes when started again. Records are not changed: no new
 * `_version`, `_modified` or `_hash` (hashes cover plaintext digests).
 */
import type { Db } from '../../db/statement.js'
import type { FieldCipher } from '../../core/crypto.js'
import { keyIdOf } from '../../core/crypto.js'
import type { ModuleDef, Registry } from '../../core/registry/types.js'
import { entityName, type Row } from '../../db/module-entity.js'
import { blindIndexColumn, itemIndexColumn, searchableItems, valueColumn } from '../../db/columns.js'
import { storedItemIndexes } from '../item-index.js'
import { storedRowsChanged } from '../history.js'
import { countRows, findRows } from '../../db/row-query.js'
import { countHistoryEntries, historyEntriesAfter, rewriteHistoryEntry, rewriteModuleRow } from '../../db/stored-value-rewrites.js'
import { inTransaction } from '../../db/transaction.js'
import { reencryptItems } from '../item-fields.js'

export interface RotationProgress {
  /** Rows looked at so far in this module. */
  scanned: number
  /** Rows whose values were re-encrypted or re-indexed. */
  rewritten: number
  total: number
}

export interface RotationOptions {
  batchSize: number
  /** Recompute every blind index with this cipher's index key. */
  reindex?: boolean
  onProgress? (p: RotationProgress): void
}

export function hasEncryptedFields (mod: ModuleDef): boolean {
  return mod.fields.some((f) => f.encrypted || f.items?.some((s) => s.encrypted) === true)
}

/**
 * New values for the encrypted (and, when reindexing, blind-index) columns
 * of one stored row of `mod`. `skipUnreadable`: a value that does not
 * decrypt keeps its index (verification reports it) instead of failing.
 */
export function refreshed (mod: ModuleDef, row: Row, id: string, cipher: FieldCipher, reindex: boolean, skipUnreadable = false): Row {
  const changes: Row = {}
  for (const f of mod.fields) {
    if (f.items !== undefined) {
      // A structured array's encrypted sub-fields (records/item-fields.ts): each ciphertext under an old key, again under the current one.
      try {
        const items = reencryptItems(f, row[valueColumn(f)], id, cipher)
        if (items !== undefined) changes[valueColumn(f)] = items
        // Its searchable sub-fields' indexes (records/item-index.ts), rebuilt from the values.
        if (reindex && searchableItems(f).length > 0) {
          const indexes = storedItemIndexes(mod, f, row[valueColumn(f)], id, cipher)
          if (JSON.stringify(indexes) !== JSON.stringify(row[itemIndexColumn(f)] ?? null)) changes[itemIndexColumn(f)] = indexes
        }
      } catch (err) {
        if (!skipUnreadable) throw err
      }
    }
    if (!f.encrypted) continue
    const stored = row[valueColumn(f)] as string | null | undefined
    if (stored === null || stored === undefined) continue
    const stale = keyIdOf(stored) !== cipher.currentKeyId
    let plain: string | undefined
    try {
      plain = stale || (reindex && f.searchable) ? cipher.decrypt(stored, id, f.name) : undefined
    } catch (err) {
      const kid = keyIdOf(stored)
      if (!skipUnreadable || kid === undefined || !cipher.knowsKeyId(kid)) throw err
      continue
    }
    if (stale) changes[valueColumn(f)] = cipher.encrypt(plain!, id, f.name)
    if (reindex && f.searchable) {
      const bidx = cipher.blindIndex(mod.name, f.name, plain!)
      if (bidx !== row[blindIndexColumn(f)]) changes[blindIndexColumn(f)] = bidx
    }
  }
  return changes
}

export async function rotateModule (em: Db, mod: ModuleDef, cipher: FieldCipher, opts: RotationOptions): Promise<RotationProgress> {
  const entity = entityName(mod)
  const progress: RotationProgress = { scanned: 0, rewritten: 0, total: await countRows(em.fork(), entity, {}) }
  if (!hasEncryptedFields(mod)) return progress
  let last = ''
  for (;;) {
    // Read the batch under the same row lock the service takes to write, so
    // an update cannot land between this read and this write.
    const done = await inTransaction(em.fork(), async (tem) => {
      const rows = await findRows(tem, entity, { _id: { $gt: last } }, { orderBy: [{ _id: 'asc' }], limit: opts.batchSize, lock: true })
      for (const row of rows) {
        const changes = refreshed(mod, row, row._id as string, cipher, opts.reindex === true)
        if (Object.keys(changes).length > 0) progress.rewritten += await rewriteModuleRow(tem, entity, row._id, changes)
      }
      return rows
    })
    if (done.length === 0) break
    progress.scanned += done.length
    last = done.at(-1)!._id as string
    opts.onProgress?.(progress)
  }
  return progress
}

/**
 * The same for the history: every stored version keeps its values
 * encrypted, so they move to the current key too (the history is only ever
 * appended to, so no lock is needed).
 */
export async function rotateHistory (em: Db, registry: Registry, cipher: FieldCipher, opts: RotationOptions): Promise<RotationProgress> {
  const progress: RotationProgress = { scanned: 0, rewritten: 0, total: await countHistoryEntries(em.fork()) }
  let last = '0'
  for (;;) {
    const rows = await historyEntriesAfter(em.fork(), last, opts.batchSize)
    if (rows.length === 0) break
    await inTransaction(em.fork(), async (tem) => {
      for (const row of rows) {
        const mod = registry.byName.get(row.modulo)
        if (mod === undefined) continue
        const update = storedRowsChanged(row, (stored) => refreshed(mod, stored, row.registro, cipher, opts.reindex === true))
        if (update !== undefined) progress.rewritten += await rewriteHistoryEntry(tem, row.id!, update)
      }
    })
    progress.scanned += rows.length
    last = rows.at(-1)!.id!
    opts.onProgress?.(progress)
  }
  return progress
}
