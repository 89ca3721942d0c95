/**
 * Field encryption (docs/user-guide.md "Encryption"): AES-256-GCM, a fresh 96-bit IV per value, the
 * record id and field name as additional authenticated data, and the key id
 * in the stored value so old keys keep decrypting after a rotation.
 *
 *   stored value = "v1:" keyId ":" base64(iv) ":" base64(ciphertext || tag)
 *
 * Blind indexes and integrity digests are HMAC-SHA-256 under two further
 * keys of their own, which never change when ENCRYPTION_KEY rotates (they
 * are kept wrapped by it in the database: plugins/system-keys.ts).
 *
 * Each searchable field has its own blind-index key (docs/user-guide.md "Encryption"), so the same
 * DNI in two fields or modules has unrelated index values:
 *
 *   field key = HKDF-SHA-256(ikm = index key, salt = empty,
 *                            info = UTF-8 "indice-ciego:<module>.<field>", 32 bytes)
 *   index     = hex HMAC-SHA-256(field key, trimmed upper-case value)
 *
 * with module and field named as in modules.yaml.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { keyId } from './config.js'

export interface FieldCipher {
  /** Key id of the key new values are encrypted with. */
  readonly currentKeyId: string
  /** Whether a key with this id is configured (current or old). */
  knowsKeyId (kid: string): boolean
  encrypt (plaintext: string, recordId: string, field: string): string
  /** Plaintext, or throws when no configured key fits or the value was tampered with. */
  decrypt (stored: string, recordId: string, field: string): string
  /** Blind index of a searchable value of `module`.`field`: trimmed, upper case, HMAC hex under the field's own key. */
  blindIndex (module: string, field: string, value: string): string
  /** HMAC hex of a value, for the integrity hash (integrity key; never the plaintext). */
  digest (value: string): string
}

export interface MacKeys {
  readonly indexKey: Buffer
  readonly integrityKey: Buffer
}

/** Key id written in a stored value, or undefined if it is not one. */
export function keyIdOf (stored: string): string | undefined {
  const parts = stored.split(':')
  return parts.length === 4 && parts[0] === 'v1' ? parts[1] : undefined
}

export function normaliseSearchable (value: string): string {
  return value.trim().toUpperCase()
}

/** The blind-index key of one field, derived from the index key (see above). */
export function fieldIndexKey (indexKey: Buffer, module: string, field: string): Buffer {
  return Buffer.from(hkdfSync('sha256', indexKey, Buffer.alloc(0), Buffer.from(`indice-ciego:${module}.${field}`, 'utf8'), 32))
}

export function createFieldCipher (keys: readonly Buffer[], macKeys: MacKeys): FieldCipher {
  if (keys.length === 0) throw new Error('at least one encryption key is needed')
  const current = keys[0]!
  const currentId = keyId(current)
  const byId = new Map(keys.map((k) => [keyId(k), k]))
  const aad = (recordId: string, field: string): Buffer => Buffer.from(`${recordId}\u0000${field}`, 'utf8')
  const hmac = (key: Buffer, value: string): string => createHmac('sha256', key).update(value, 'utf8').digest('hex')
  // Derived once per field: a search or write costs one HMAC, as before.
  const fieldKeys = new Map<string, Buffer>()
  const fieldKey = (module: string, field: string): Buffer => {
    const name = `${module}\u0000${field}`
    let k = fieldKeys.get(name)
    if (k === undefined) fieldKeys.set(name, k = fieldIndexKey(macKeys.indexKey, module, field))
    return k
  }
  return {
    currentKeyId: currentId,
    knowsKeyId: (kid) => byId.has(kid),
    encrypt (plaintext, recordId, field) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', current, iv)
      cipher.setAAD(aad(recordId, field))
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
      return `v1:${currentId}:${iv.toString('base64')}:${ct.toString('base64')}`
    },
    decrypt (stored, recordId, field) {
      const [version, kid, ivB64, ctB64] = stored.split(':')
      const key = kid === undefined ? undefined : byId.get(kid)
      if (version !== 'v1' || key === undefined || ivB64 === undefined || ctB64 === undefined) {
        throw new Error(`cannot decrypt ${field} of ${recordId}: unknown format or key id ${String(kid)}`)
      }
      const data = Buffer.from(ctB64, 'base64')
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivB64, 'base64'))
      decipher.setAAD(aad(recordId, field))
      decipher.setAuthTag(data.subarray(data.length - 16))
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8')
    },
    blindIndex (module, field, value) { return hmac(fieldKey(module, field), normaliseSearchable(value)) },
    digest (value) { return hmac(macKeys.integrityKey, value) },
  }
}
