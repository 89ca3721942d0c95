/**
 * Which declared fields enter a version's `_hash` (SPEC S7, README "The hash
 * chain"). A change to modules.yaml must never invalidate a stored hash, so
 * the payload may not depend on what is declared *now*:
 *
 * - format 2 (every version written since): a declared field enters only
 *   when it has a value. A field added later is null in every older
 *   version, so it changes none of their payloads.
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
import type { ModuleDef } from '../core/registry/types.js'
import { valueColumn } from '../db/columns.js'
import type { Row } from '../db/module-entity.js'

/** The format every new version is sealed with. */
export const CURRENT_SEAL_FORMAT = 2

export type Seal =
  | { readonly format: 2 }
  /** `fields`: names of the fields declared when the version was sealed. */
  | { readonly format: 1, readonly fields: ReadonlySet<string> }

export const CURRENT_SEAL: Seal = { format: 2 }

/** The seal of a stored version, from its history entry's format and snapshot. */
export function sealOf (mod: ModuleDef, entry: { sello: number, datos: Row }): Seal {
  if (entry.sello !== 1) return CURRENT_SEAL
  return { format: 1, fields: new Set(mod.fields.filter((f) => Object.hasOwn(entry.datos, valueColumn(f))).map((f) => f.name)) }
}

/** Whether a declared field enters the payload (see above). */
export function isSealed (seal: Seal, field: string, value: unknown): boolean {
  return (value !== null && value !== undefined) || (seal.format === 1 && seal.fields.has(field))
}
