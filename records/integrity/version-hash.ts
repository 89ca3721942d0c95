/**
 * The one formula of a version's `_hash` (docs/operator-guide.md "The hash
 * chain"): SHA-256 of the canonical JSON of the record's hash payload
 * (records/record-view.ts `hashPayload`: which fields, in which form, by
 * seal format), whose `_prev` is the previous version's hash ('' for
 * version 1). The write path seals with it (records/storage/) and
 * verification recomputes with it (chain.ts), so the two cannot drift.
 */
import { hash } from 'node:crypto'
import { canonicalJson } from '../../core/canonical.js'
import type { FieldCipher } from '../../core/crypto.js'
import type { ModuleDef } from '../../core/registry/types.js'
import type { Row } from '../../db/module-entity.js'
import { hashPayload } from '../record-view.js'
import { currentSeal, type Seal } from './seal-format.js'

/**
 * SHA-256 of UTF-8 text, lower-case hex (a version's hash, the global
 * chain's entries and links). `crypto.hash` (Node 20.12+): one call, no
 * Hash object per version (docs/performance.md "A lone request").
 */
export function sha256 (text: string): string {
  return hash('sha256', text, 'hex')
}

/**
 * The hash of a stored row (or history snapshot) as version of `mod`,
 * given the previous version's hash and the seal format it is sealed with
 * (the current one for a new version), and the payload hashed (for the
 * history entry's `campos`). `erasure`: in an erasure's version, the digest
 * of its certificate (`_supresion`). Throws when an encrypted value does not decrypt.
 */
export function versionHash (mod: ModuleDef, row: Row, cipher: FieldCipher, previousHash: string, seal: Seal = currentSeal(mod), erasure?: string): { hash: string, payload: Record<string, unknown> } {
  const payload = hashPayload(mod, row, cipher, previousHash, seal)
  // An erasure's version seals its certificate (records/integrity/residue.ts).
  if (erasure !== undefined) payload._supresion = erasure
  return { hash: sha256(canonicalJson(payload)), payload }
}
