/**
 * A printed record's verification code (docs/user-guide.md "Printed
 * records"): the record's id, its version and that version's `_hash`,
 * signed with the deployment's Ed25519 key, the one that signs the global
 * chain's checkpoints. Whoever holds the published public key checks it
 * offline; `POST /documentos/verificar` also says whether the version
 * still stands. The signed message is the canonical JSON of
 *
 *   {"_hash":"<64 hex>","documento":1,"id":"<id>","version":n}
 *
 * (a key set no checkpoint has, so neither can pass for the other). The
 * code is `<id>.<version>.<base32 of hash and signature>`: RFC 4648
 * base32, upper case, no padding, which a QR code holds in its compact
 * alphanumeric mode and a person can read aloud; spaces and line breaks
 * are ignored and lower case is read as upper, so a code copied from the
 * paper's text or typed in groups still reads.
 */
import { base32nopad } from '@scure/base'
import { canonicalJson } from '../../core/canonical.js'

export interface CodeContent {
  readonly id: string
  readonly version: number
  /** The version's `_hash` (64 hex digits). */
  readonly hash: string
}

export interface ReadCode extends CodeContent {
  readonly signature: Buffer
}

const HASH_BYTES = 32
const SIGNATURE_BYTES = 64
const ID = /^[A-Z0-9]{2,6}-\d{4}-\d{5,}$/

/** What the key signs for a code. */
export function signedMessage (c: CodeContent): Buffer {
  return Buffer.from(canonicalJson({ _hash: c.hash, documento: 1, id: c.id, version: c.version }), 'utf8')
}

export function makeCode (c: CodeContent, sign: (message: Buffer) => Buffer): string {
  const tail = Buffer.concat([Buffer.from(c.hash, 'hex'), sign(signedMessage(c))])
  return `${c.id}.${c.version}.${base32nopad.encode(tail)}`
}

/** The code's parts, or undefined when the text is not a code's shape (its signature unchecked). */
export function readCode (text: string): ReadCode | undefined {
  const parts = text.replace(/\s+/g, '').toUpperCase().split('.')
  if (parts.length !== 3) return undefined
  const [id, version, tail] = parts as [string, string, string]
  if (!ID.test(id) || !/^[1-9]\d{0,8}$/.test(version)) return undefined
  let bytes: Uint8Array
  try { bytes = base32nopad.decode(tail) } catch { return undefined }
  if (bytes.length !== HASH_BYTES + SIGNATURE_BYTES) return undefined
  const raw = Buffer.from(bytes)
  return { id, version: Number(version), hash: raw.subarray(0, HASH_BYTES).toString('hex'), signature: raw.subarray(HASH_BYTES) }
}

/** The code as printed: its id and version, then the rest in groups of eight, so that a line can break between them. */
export function printedCode (code: string): string {
  const [id, version, tail] = code.split('.') as [string, string, string]
  return `${id}.${version}.${tail.match(/.{1,8}/g)!.join(' ')}`
}
