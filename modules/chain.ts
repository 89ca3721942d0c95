/**
 * The integrity chain (SPEC S7). `_hash` of version n is SHA-256 of the
 * canonical JSON of the record at n (see record-view.ts `hashPayload`) with
 * `_prev` = the hash of version n-1 ('' for version 1). Verification
 * recomputes every stored version from the history, checks the versions
 * run 1..n without a gap, and that the live row is the last of them: an
 * edit, insertion or deletion made behind the service's back shows as the
 * first version where the chain breaks.
 */
import { createHash } from 'node:crypto'
import type { EntityManager } from '@mikro-orm/postgresql'
import { canonicalJson } from '../core/canonical.js'
import { keyIdOf, type FieldCipher } from '../core/crypto.js'
import type { ModuleDef } from '../core/registry/types.js'
import type { Row } from './build-entity.js'
import { versionsOf } from './history.js'
import { hashPayload } from './record-view.js'
import { valueColumn } from './columns.js'

export function sha256 (text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

export interface Verdict {
  valido: boolean
  /** First version at which the chain does not hold. */
  version_rota?: number
}

/**
 * Hash a stored row (or history snapshot) would have, given the previous
 * version's hash; undefined when a ciphertext no longer decrypts (tampered).
 * A value under a key that is simply not configured is an operations
 * problem, not tampering: it throws (500, logged).
 */
function recompute (mod: ModuleDef, row: Row, cipher: FieldCipher, prev: string): string | undefined {
  for (const f of mod.fields) {
    const kid = f.encrypted ? keyIdOf(String(row[valueColumn(f)] ?? '')) : undefined
    if (kid !== undefined && /^[0-9a-f]{8}$/.test(kid) && !cipher.knowsKeyId(kid)) {
      throw new Error(`${mod.name} ${String(row._id)}: ${f.name} is encrypted with key ${kid}, which is not configured (ENCRYPTION_KEYS)`)
    }
  }
  try {
    return sha256(canonicalJson(hashPayload(mod, row, cipher, prev)))
  } catch {
    return undefined // a ciphertext that no longer decrypts was tampered with
  }
}

export async function verifyChain (em: EntityManager, mod: ModuleDef, live: Row, cipher: FieldCipher): Promise<Verdict> {
  const versions = await versionsOf(em, mod, live._id as string)
  let prev = ''
  for (const [i, v] of versions.entries()) {
    const expected = i + 1
    if (v.version !== expected) return { valido: false, version_rota: expected }
    const snapshot = v.datos
    if (snapshot._version !== v.version || snapshot._hash !== v.hash || snapshot._id !== live._id) return { valido: false, version_rota: v.version }
    if (recompute(mod, snapshot, cipher, prev) !== v.hash) return { valido: false, version_rota: v.version }
    prev = v.hash
  }
  const last = versions.length
  const liveVersion = live._version as number
  if (liveVersion !== last) return { valido: false, version_rota: Math.min(liveVersion, last + 1) }
  const previous = last >= 2 ? versions[last - 2]!.hash : ''
  if (live._hash !== prev || recompute(mod, live, cipher, previous) !== live._hash) return { valido: false, version_rota: liveVersion }
  return { valido: true }
}
