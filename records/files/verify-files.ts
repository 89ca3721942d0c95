/**
 * Custody in /verificar (docs/user-guide.md "Evidence files"): every file
 * any version of the record names is read back from the store and
 * rehashed (decrypted first when encrypted at rest, which also checks its
 * GCM tag), so a file whose bytes were altered, swapped with another's or
 * deleted shows, at the first version that names it. Reads every byte of
 * every file of the record: a record with large files verifies at disk speed.
 */
import { createHash } from 'node:crypto'
import { pipeline } from 'node:stream/promises'
import { Writable } from 'node:stream'
import { UnavailableError } from '../../core/errors.js'
import type { FileItem } from '../../core/field-types/file.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import type { Row } from '../../db/module-entity.js'
import { outageOr, storeOutageReason } from '../../stores/files/unavailable.js'
import { filesOf, fileFields } from './file-items.js'
import { openFile, storeKey, type FilesContext } from './record-files.js'

export interface BrokenFile {
  readonly version: number
  readonly archivo: string
  readonly motivo: 'ARCHIVO_FALTA' | 'ARCHIVO_ALTERADO'
}

/** SHA-256 and size of a stored file as uploaded, or undefined when it cannot be read back whole (missing, or fails to decrypt). */
async function rehash (ctx: Pick<FilesContext, 'files' | 'cipher'>, recordId: string, field: string, item: FileItem): Promise<{ sha256: string, bytes: number } | undefined> {
  const hash = createHash('sha256')
  let bytes = 0
  try {
    await pipeline(await openFile(ctx, recordId, field, item), new Writable({
      write (chunk: Buffer, _e, callback) { hash.update(chunk); bytes += chunk.length; callback() },
    }))
  } catch (err) {
    // A store that is down (also once the read has begun) is a 503, not a file found altered.
    if (err instanceof UnavailableError) throw err
    if (storeOutageReason(err) !== undefined) throw outageOr(err, ctx.files.describe())
    return undefined
  }
  return { sha256: hash.digest('hex'), bytes }
}

/** The first file (by the version that first names it) whose stored bytes are not those sealed; undefined when all hold. */
export async function verifyFiles (ctx: Pick<FilesContext, 'files' | 'cipher'>, mod: ModuleDef, recordId: string, versions: ReadonlyArray<{ version: number, datos: Row }>): Promise<BrokenFile | undefined> {
  const seen = new Set<string>()
  for (const v of versions) {
    for (const f of fileFields(mod)) {
      for (const item of filesOf(v.datos[valueColumn(f)])) {
        if (seen.has(item.id)) continue
        seen.add(item.id)
        if (await ctx.files.size(storeKey(item)) === undefined) return { version: v.version, archivo: item.id, motivo: 'ARCHIVO_FALTA' }
        const got = await rehash(ctx, recordId, f.name, item)
        if (got === undefined || got.sha256 !== item.sha256 || got.bytes !== item.bytes) return { version: v.version, archivo: item.id, motivo: 'ARCHIVO_ALTERADO' }
      }
    }
  }
  return undefined
}
