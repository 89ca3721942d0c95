/**
 * A download checked against the SHA-256 and size its record seals
 * (docs/user-guide.md "Evidence files"), so altered evidence is never
 * served as intact. A stored size other than the sealed one fails before
 * the first byte. Otherwise the bytes are hashed as they stream and the
 * last one is held until the hash holds: a mismatch (or an encrypted
 * file's GCM tag failing) cuts the answer short, so a client sees an
 * incomplete body, never a complete one. A range is served from the whole
 * file read through the check (byte-slice.ts holds the range's last byte
 * until the file's end), so a range of an altered file is cut short too.
 * Each is reported once (`onAltered`: the log line and the metric).
 */
import { createHash } from 'node:crypto'
import { pipeline, Transform, type Readable } from 'node:stream'
import { AlteredFileError } from '../../core/errors.js'
import { CIPHER_OVERHEAD, fileAad } from '../../core/file-cipher.js'
import type { FileItem } from '../../core/field-types/file.js'
import type { ByteRange } from '../../stores/files/contract.js'
import { byteSlice } from './byte-slice.js'
import { isEncryptedFile, storeKey, type FilesContext } from './record-files.js'

/** A file found altered, for the log line and the metric: names and hashes, no personal data. */
export interface AlteredFile {
  readonly module: string
  readonly record: string
  readonly field: string
  readonly file: string
  /** The sealed SHA-256. */
  readonly expected: string
  /** What was read instead: its SHA-256, its size, or why it cannot be decrypted. */
  readonly found: string
}

export type OnAltered = (altered: AlteredFile) => void

/** Where a file is, as the report names it. */
export interface SealedFile {
  readonly module: string
  readonly record: string
  readonly field: string
  readonly item: FileItem
}

function report (onAltered: OnAltered | undefined, f: SealedFile, found: string): void {
  onAltered?.({ module: f.module, record: f.record, field: f.field, file: f.item.id, expected: f.item.sha256, found })
}

/**
 * Fails (500 `Archivo alterado`, reported) when the stored size is not the
 * one the seal means (an encrypted file's adds its header and tag): a
 * truncated, extended, swapped or deleted file, before a byte leaves.
 */
export function checkStoredSize (f: SealedFile, storedSize: number | undefined, onAltered: OnAltered | undefined): void {
  const sealed = isEncryptedFile(f.item) ? f.item.bytes + CIPHER_OVERHEAD : f.item.bytes
  if (storedSize === sealed) return
  const found = storedSize === undefined ? 'missing from the store' : `stored size ${storedSize}, sealed ${sealed}`
  report(onAltered, f, found)
  throw new AlteredFileError(found)
}

/** Passes the bytes on, all but the last, which leaves only once the whole has the sealed size and SHA-256. */
function sealedCheck (item: FileItem): Transform {
  const hash = createHash('sha256')
  let bytes = 0
  let last: Buffer | undefined
  return new Transform({
    transform (chunk: Buffer, _e, callback) {
      bytes += chunk.length
      if (bytes > item.bytes) { callback(new AlteredFileError(`more than the sealed ${item.bytes} bytes`)); return }
      if (chunk.length === 0) { callback(); return }
      hash.update(chunk)
      if (last !== undefined) this.push(last)
      last = chunk.subarray(chunk.length - 1)
      callback(null, chunk.length > 1 ? chunk.subarray(0, chunk.length - 1) : undefined)
    },
    flush (callback) {
      const found = hash.digest('hex')
      if (bytes !== item.bytes) { callback(new AlteredFileError(`${found} (${bytes} bytes, sealed ${item.bytes})`)); return }
      if (found !== item.sha256) { callback(new AlteredFileError(found)); return }
      callback(null, last)
    },
  })
}

/**
 * The file's bytes as uploaded (a range of them when given), decrypted
 * when encrypted at rest, checked against the seal on the way; the
 * stream errors (and the answer is cut) when they do not match.
 */
export async function openSealed (ctx: Pick<FilesContext, 'files' | 'cipher' | 'onAltered'>, f: SealedFile, range: ByteRange | undefined): Promise<Readable> {
  const stored = await ctx.files.open(storeKey(f.item))
  const stages: Array<Readable | Transform> = [stored]
  if (isEncryptedFile(f.item)) stages.push(ctx.cipher.decryptor(fileAad(f.record, f.field, f.item.id)))
  stages.push(sealedCheck(f.item))
  if (range !== undefined) stages.push(byteSlice(range))
  // An error anywhere (the store, the tag, the hash) destroys the stream returned, so the answer is cut short.
  return pipeline(stages, (err) => {
    if (err instanceof AlteredFileError) report(ctx.onAltered, f, err.found)
  }) as unknown as Readable
}
