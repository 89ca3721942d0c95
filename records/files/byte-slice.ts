/**
 * A byte range of a stream that must be read to its end to be trusted (an
 * encrypted file, whose GCM tag is its last 16 bytes; core/file-cipher.ts):
 * passes only bytes `start…end` (both included) on, keeps reading and
 * dropping the rest, and gives the range's last byte only once the input
 * has ended well, so an input that fails at its end (an altered file) cuts
 * the range short instead of completing it.
 */
import { Transform } from 'node:stream'
import type { ByteRange } from '../../stores/files/contract.js'

export function byteSlice (range: ByteRange): Transform {
  let offset = 0
  let last: Buffer | undefined
  return new Transform({
    transform (chunk: Buffer, _e, callback) {
      const from = Math.max(range.start - offset, 0)
      const to = Math.min(range.end + 1 - offset, chunk.length)
      offset += chunk.length
      if (to <= from) { callback(); return }
      const part = chunk.subarray(from, to)
      // The byte held before goes out now; this part's last byte is held instead.
      const out = last === undefined ? part.subarray(0, part.length - 1) : Buffer.concat([last, part.subarray(0, part.length - 1)])
      last = Buffer.from(part.subarray(part.length - 1))
      callback(null, out.length > 0 ? out : undefined)
    },
    flush (callback) {
      callback(null, last)
    },
  })
}
