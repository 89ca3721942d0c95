/**
 * Evidence files encrypted at rest (docs/user-guide.md "Evidence files"),
 * streamed: AES-256-GCM under the current ENCRYPTION_KEY, a fresh 96-bit IV
 * per file, the record, field and file id as additional authenticated data.
 *
 *   stored file = "PRF1" keyId(8 ASCII hex) iv(12) ciphertext tag(16)
 *
 * The key id lets old keys (ENCRYPTION_KEYS) keep decrypting after a
 * rotation. Decryption holds back the last 16 bytes as the tag, and the
 * plaintext of the last chunk until the tag holds: a file altered in
 * storage fails at its end (the stream errors) before its last bytes are
 * given, so a download of it is always cut short, never complete.
 */
import { createCipheriv, createDecipheriv, randomBytes, type DecipherGCM } from 'node:crypto'
import { Transform } from 'node:stream'
import { keyId } from './config.js'
import { AlteredFileError } from './errors.js'

const MAGIC = Buffer.from('PRF1', 'ascii')
const HEADER = MAGIC.length + 8 + 12
const TAG = 16
/** What encryption adds to a file's size: its header and tag. */
export const CIPHER_OVERHEAD = HEADER + TAG

/** The authenticated data of a file: it cannot be moved to another record, field or id. */
export function fileAad (recordId: string, field: string, fileId: string): Buffer {
  return Buffer.from(`archivo\u0000${recordId}\u0000${field}\u0000${fileId}`, 'utf8')
}

export interface FileCipher {
  encryptor (aad: Buffer): Transform
  decryptor (aad: Buffer): Transform
}

export function createFileCipher (keys: readonly Buffer[]): FileCipher {
  const current = keys[0]!
  const currentId = Buffer.from(keyId(current), 'ascii')
  const byId = new Map(keys.map((k) => [keyId(k), k]))
  return {
    encryptor (aad) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', current, iv)
      cipher.setAAD(aad)
      let started = false
      return new Transform({
        transform (chunk: Buffer, _e, callback) {
          const body = cipher.update(chunk)
          if (!started) { started = true; callback(null, Buffer.concat([MAGIC, currentId, iv, body])); return }
          callback(null, body)
        },
        flush (callback) {
          const head = started ? [] : [MAGIC, currentId, iv]
          callback(null, Buffer.concat([...head, cipher.final(), cipher.getAuthTag()]))
        },
      })
    },
    decryptor (aad) {
      let header = Buffer.alloc(0)
      let decipher: DecipherGCM | undefined
      let held = Buffer.alloc(0)
      // Plaintext not yet given: the last chunk's, until the tag is checked.
      let pending = Buffer.alloc(0)
      return new Transform({
        transform (chunk: Buffer, _e, callback) {
          try {
            if (decipher === undefined) {
              header = Buffer.concat([header, chunk])
              if (header.length < HEADER) { callback(); return }
              if (!header.subarray(0, 4).equals(MAGIC)) throw new Error('not an encrypted evidence file')
              const key = byId.get(header.subarray(4, 12).toString('ascii'))
              if (key === undefined) throw new Error('encrypted with a key that is not configured')
              decipher = createDecipheriv('aes-256-gcm', key, header.subarray(12, HEADER))
              decipher.setAAD(aad)
              chunk = header.subarray(HEADER)
            }
            // The last 16 bytes may be the tag: hold them back until the end.
            held = Buffer.concat([held, chunk])
            const ready = held.subarray(0, Math.max(0, held.length - TAG))
            held = Buffer.from(held.subarray(ready.length))
            const out = pending
            pending = decipher.update(ready)
            callback(null, out.length > 0 ? out : undefined)
          } catch (err) {
            callback(new AlteredFileError(`undecryptable: ${(err as Error).message}`))
          }
        },
        flush (callback) {
          try {
            if (decipher === undefined || held.length !== TAG) throw new Error('encrypted evidence file cut short')
            decipher.setAuthTag(held)
            const last = decipher.final()
            callback(null, Buffer.concat([pending, last]))
          } catch (err) {
            // An altered file fails its GCM tag here, at its end.
            callback(new AlteredFileError(`undecryptable: ${(err as Error).message}`))
          }
        },
      })
    },
  }
}
