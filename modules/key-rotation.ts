/**
 * Re-encryption of a module's stored values under the current key, and
 * rebuilding of its blind indexes. Works in batches in `_id` order (keyset
 * pagination), one transaction per batch, while the service keeps running:
 * each row is updated only if its ciphertexts are still the ones read, so a
 * concurrent write (already under the current key) is never overwritten.
 * Values already under the current key are skipped, so an interrupted run
 * simply resumes when started again. Records are not changed: no new
 * `_version`, `_modified` or `_hash` (hashes cover plaintext digests).
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { FieldCipher } from '../core/crypto.js'
import { keyIdOf } from '../core/crypto.js'
import type { ModuleDef } from '../core/registry/types.js'
import { entityName, type Row } from './build-entity.js'
import { blindIndexColumn, valueColumn } from './columns.js'

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
  return mod.fields.some((f) => f.encrypted)
}

export async function rotateModule (em: EntityManager, mod: ModuleDef, cipher: FieldCipher, opts: RotationOptions): Promise<RotationProgress> {
  const fields = mod.fields.filter((f) => f.encrypted)
  const entity = entityName(mod)
  const progress: RotationProgress = { scanned: 0, rewritten: 0, total: await em.fork().count(entity, {}) }
  if (fields.length === 0) return progress
  const columns = ['_id', ...fields.map(valueColumn), ...fields.filter((f) => f.searchable).map(blindIndexColumn)]
  let last = ''
  for (;;) {
    const rows = await em.fork().find(entity, { _id: { $gt: last } }, { orderBy: { _id: 'asc' }, limit: opts.batchSize, fields: columns as never }) as Row[]
    if (rows.length === 0) break
    await em.fork().transactional(async (tem) => {
      for (const row of rows) {
        const id = row._id as string
        const changes: Row = {}
        for (const f of fields) {
          const stored = row[valueColumn(f)] as string | null
          if (stored === null) continue
          const stale = keyIdOf(stored) !== cipher.currentKeyId
          const plain = stale || (opts.reindex === true && f.searchable) ? cipher.decrypt(stored, id, f.name) : undefined
          if (stale) changes[valueColumn(f)] = cipher.encrypt(plain!, id, f.name)
          if (opts.reindex === true && f.searchable) {
            const bidx = cipher.blindIndex(plain!)
            if (bidx !== row[blindIndexColumn(f)]) changes[blindIndexColumn(f)] = bidx
          }
        }
        if (Object.keys(changes).length === 0) continue
        const unchanged = Object.fromEntries(fields.map((f) => [valueColumn(f), row[valueColumn(f)]]))
        progress.rewritten += await tem.nativeUpdate(entity, { _id: id, ...unchanged }, changes)
      }
    })
    progress.scanned += rows.length
    last = rows.at(-1)!._id as string
    opts.onProgress?.(progress)
  }
  return progress
}
