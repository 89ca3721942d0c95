/**
 * Which declared fields enter a version's `_hash` (docs/operator-guide.md "The hash
 * chain"). A change to modules.yaml must never invalidate a stored hash, so
 * the payload may not depend on what is declared *now*:
 *
 * - format 4 (every version written since format 4 was introduced, in a
 *   module whose structured arrays have encrypted sub-fields): format 3,
 *   and each such sub-field's value in the items as the HMAC of its
 *   plaintext (records/item-fields.ts) instead of the value. Versions
 *   written before keep their format: their items were plaintext, and
 *   enter as stored.
 * - format 3 (every version written since format 3 was introduced, in a module with encrypted
 *   fields): format 2 plus `_clave`, an HMAC under the integrity key of the
 *   version's id and number. Without it a reader who may not decrypt sees
 *   every other entry of the payload, so could test the hypothesis "every
 *   encrypted field is empty" against `_hash`; with it nobody without the
 *   integrity key can recompute any candidate payload. (Chosen over
 *   sealing empty encrypted fields as keyed markers: that would make a
 *   field declared later enter older payloads.)
 * - format 2 (modules without encrypted fields, and every version written
 *   before format 3): a declared field enters only when it has a value. A
 *   field added later is null in every older version, so it changes none
 *   of their payloads.
 * - format 1 (versions written before): every field declared when the
 *   version was sealed, null included. That set is the declared fields
 *   whose column is a key of the version's history snapshot, since the
 *   service always stored the full row, null columns included.
 *
 * In both, a declared field outside the set that does have a value enters
 * too: a genuine version has none (its column did not exist yet, or was
 * null), so a value written there behind the service's back breaks the hash
 * instead of going unnoticed.
 */
import type { ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import type { Row } from '../../db/module-entity.js'

export type Seal =
  | { readonly format: 2 | 3 | 4 }
  /** `fields`: names of the fields declared when the version was sealed. */
  | { readonly format: 1, readonly fields: ReadonlySet<string> }

const FORMAT_2: Seal = { format: 2 }
const FORMAT_3: Seal = { format: 3 }
const FORMAT_4: Seal = { format: 4 }

/** Each module's current format, worked out on first use (a module's declaration does not change while it runs). */
const current = new WeakMap<ModuleDef, Seal>()

/** The format a new version of `mod` is sealed with: 4 when its items have encrypted sub-fields, 3 when it has encrypted fields, else 2. */
export function currentSeal (mod: ModuleDef): Seal {
  let seal = current.get(mod)
  if (seal === undefined) {
    seal = mod.fields.some((f) => f.items?.some((s) => s.encrypted) === true) ? FORMAT_4 : mod.fields.some((f) => f.encrypted) ? FORMAT_3 : FORMAT_2
    current.set(mod, seal)
  }
  return seal
}

/** The seal of a stored version, from its history entry's format and snapshot. */
export function sealOf (mod: ModuleDef, entry: { sello: number, datos: Row | null }): Seal {
  if (entry.sello === 4) return FORMAT_4
  if (entry.sello === 3) return FORMAT_3
  if (entry.sello !== 1) return FORMAT_2
  return { format: 1, fields: new Set(mod.fields.filter((f) => Object.hasOwn(entry.datos ?? {}, valueColumn(f))).map((f) => f.name)) }
}

/** What `_clave` of formats 3 and 4 is the HMAC of (docs/operator-guide.md "The hash chain"). */
export function sealKeyInput (id: string, version: number): string {
  return `sello\u0000${id}\u0000${version}`
}

/** Whether a declared field enters the payload (see above). */
export function isSealed (seal: Seal, field: string, value: unknown): boolean {
  return (value !== null && value !== undefined) || (seal.format === 1 && seal.fields.has(field))
}
