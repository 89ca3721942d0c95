/**
 * What a checkpoint of the global chain is (docs/operator-guide.md "Tamper
 * evidence"), its Ed25519 signature, and what a file that claims to be one
 * turns out to be. Format 2 names the chain it belongs to:
 *
 *   {"formato":2,"cadena":"<32 hex>","seq":n,"cabeza":link(n),"fecha":"<ISO 8601 UTC>","firma":"<base64>"}
 *
 * `firma` signs the canonical JSON of the other fields. Format 1 (written
 * before chains had an identity) has no `cadena`; it is still verified, and
 * adopted by the chain whose key signed it.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { canonicalJson } from '../../core/canonical.js'
import type { ChainHead } from './global-chain.js'

export interface Checkpoint {
  formato: 1 | 2
  /** The chain's identity (chain-identity.ts); absent in format 1. */
  cadena?: string
  seq: number
  cabeza: string
  fecha: string
  firma: string
}

export const CHAIN_ID = /^[0-9a-f]{32}$/

export interface Signer {
  /** Raw Ed25519 public key, base64 (what the auditor is given). */
  readonly publicKey: string
  sign (head: ChainHead, fecha: string, cadena: string): Checkpoint
  /** Whether a checkpoint (of unknown origin) is well formed and signed by this key. */
  valid (cp: unknown): cp is Checkpoint
  /** The signature of another message this key vouches for (a printed record's code, records/documents/document-code.ts). */
  signMessage (message: Buffer): Buffer
}

/** Whether `signature` is the raw Ed25519 public key's (base64, as published) over `message`; false for a malformed key or signature. */
export function verifyWithPublicKey (publicKey: string, message: Buffer, signature: Buffer): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey, 'base64').toString('base64url') }, format: 'jwk' })
    return verify(null, message, key, signature)
  } catch {
    return false
  }
}

/** PKCS#8 DER prefix of an Ed25519 private key, before its 32-byte seed. */
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex')

const signed = (cp: Omit<Checkpoint, 'firma'>): Buffer => Buffer.from(canonicalJson(cp.formato === 1
  ? { cabeza: cp.cabeza, fecha: cp.fecha, formato: 1, seq: cp.seq }
  : { cabeza: cp.cabeza, cadena: cp.cadena, fecha: cp.fecha, formato: 2, seq: cp.seq }), 'utf8')

/** Whether a value has a checkpoint's shape (either format); says nothing of its signature. */
export function wellFormed (c: unknown): c is Checkpoint {
  if (typeof c !== 'object' || c === null) return false
  const o = c as Record<string, unknown>
  if (o.formato !== 1 && o.formato !== 2) return false
  if (o.formato === 2 ? typeof o.cadena !== 'string' || !CHAIN_ID.test(o.cadena) : o.cadena !== undefined) return false
  return Number.isSafeInteger(o.seq) && (o.seq as number) >= 0 && typeof o.cabeza === 'string' && /^[0-9a-f]{64}$/.test(o.cabeza) &&
    typeof o.fecha === 'string' && typeof o.firma === 'string'
}

export function createSigner (seed: Buffer): Signer {
  const privateKey: KeyObject = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, seed]), format: 'der', type: 'pkcs8' })
  const publicKey = createPublicKey(privateKey)
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')
  return {
    publicKey: raw.toString('base64'),
    sign (head, fecha, cadena) {
      const cp = { formato: 2 as const, cadena, seq: head.seq, cabeza: head.enlace, fecha }
      return { ...cp, firma: sign(null, signed(cp), privateKey).toString('base64') }
    },
    signMessage: (message) => sign(null, message, privateKey),
    valid (cp): cp is Checkpoint {
      if (!wellFormed(cp)) return false
      try {
        return verify(null, signed(cp), publicKey, Buffer.from(cp.firma, 'base64'))
      } catch {
        return false
      }
    },
  }
}

/**
 * What a checkpoint file holds, for the chain `cadena` signed by `signer`:
 * one of this chain's (`propio`; a format 1 one this key signed is adopted),
 * a forgery claiming to be of this chain (`falso`), another chain's
 * (`ajeno`: its identity differs, or a format 1 one this key did not sign,
 * which cannot be told from a forgery), or not a checkpoint at all
 * (`ilegible`: empty, cut short, not JSON, the wrong shape).
 */
export type FileContent =
  | { kind: 'propio', cp: Checkpoint }
  | { kind: 'falso' }
  | { kind: 'ajeno', cadena: string | undefined }
  | { kind: 'ilegible', why: string }

export function classify (text: string, signer: Signer, cadena: string): FileContent {
  let c: unknown
  try { c = JSON.parse(text) } catch { return { kind: 'ilegible', why: text.trim() === '' ? 'empty' : 'not complete JSON' } }
  if (!wellFormed(c)) return { kind: 'ilegible', why: 'not the shape of a checkpoint' }
  if (c.formato === 2 && c.cadena !== cadena) return { kind: 'ajeno', cadena: c.cadena }
  const formato = c.formato
  if (signer.valid(c)) return { kind: 'propio', cp: c }
  return formato === 1 ? { kind: 'ajeno', cadena: undefined } : { kind: 'falso' }
}
