/**
 * What an erasure of personal data leaves sealed (docs/decisions.md "Erasing
 * personal data keeps the chain: residual seals"). A version's residue is
 * the hash its payload would have with the erased fields null: worked out by
 * the erasure from the row as it was, then checked by verification against
 * the row as stored (nulled by the erasure, so a value written back breaks
 * it). The certificate lists, for each earlier version, its original hash
 * and its residue; its digest enters the erasure version's payload.
 */
import { canonicalJson } from '../../core/canonical.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { blindIndexColumn, itemIndexColumn, searchableItems, valueColumn } from '../../db/columns.js'
import type { ErasureCertificate } from '../../db/history-entity.js'
import type { Row } from '../../db/module-entity.js'
import type { FieldCipher } from '../../core/crypto.js'
import type { StoredVersion } from '../history.js'
import { isItem } from '../item-fields.js'
import { sealOf } from './seal-format.js'
import { versionHash } from './version-hash.js'

/** The personal data of `mod` an erasure destroys: fields by name, structured arrays' sub-fields as `testigos.dni`. */
export function personalPaths (mod: ModuleDef): string[] {
  return mod.fields.flatMap((f) => f.items === undefined
    ? (f.personal ? [f.name] : [])
    : f.items.filter((s) => s.personal).map((s) => `${f.name}.${s.name}`))
}

/** The declared fields an erased path belongs to (`testigos.dni` → `testigos`). */
export function erasedFields (paths: readonly string[]): Set<string> {
  return new Set(paths.map((p) => p.split('.')[0]!))
}


/** `row` with the values at `paths` null (and their blind indexes); the columns changed, or none. */
export function erasedColumns (mod: ModuleDef, row: Row, paths: readonly string[]): Row {
  const changes: Row = {}
  const subs = new Map<FieldDef, string[]>()
  for (const path of paths) {
    const [name, sub] = path.split('.') as [string, string | undefined]
    const f = mod.fieldMap.get(name)
    if (f === undefined) continue
    if (sub !== undefined) {
      subs.set(f, [...(subs.get(f) ?? []), sub])
      continue
    }
    if ((row[valueColumn(f)] ?? null) !== null) changes[valueColumn(f)] = null
    if (f.searchable && (row[blindIndexColumn(f)] ?? null) !== null) changes[blindIndexColumn(f)] = null
  }
  for (const [f, names] of subs) {
    const items = row[valueColumn(f)]
    if (!Array.isArray(items)) continue
    let changed = false
    const erased = items.map((item) => {
      if (!isItem(item) || !names.some((n) => (item[n] ?? null) !== null)) return item
      changed = true
      return { ...item, ...Object.fromEntries(names.filter((n) => Object.hasOwn(item, n)).map((n) => [n, null])) }
    })
    if (changed) changes[valueColumn(f)] = erased
    // Indexes of erased searchable sub-fields go with them (records/item-index.ts); searchable ones are encrypted, so all personal.
    const searchable = searchableItems(f)
    if (searchable.length > 0 && searchable.every((s) => names.includes(s.name)) && (row[itemIndexColumn(f)] ?? null) !== null) changes[itemIndexColumn(f)] = null
  }
  return changes
}

/**
 * What an erasure version's payload holds as `_supresion`: the HMAC under
 * the integrity key of its certificate's canonical JSON. Keyed in every
 * seal format, so forging an erasure (which re-seals what is left of
 * earlier versions) needs the integrity key even in a module whose
 * versions carry no `_clave`.
 */
export function certificateDigest (certificate: ErasureCertificate, cipher: FieldCipher): string {
  return cipher.digest(canonicalJson(certificate))
}

/**
 * The certificate of erasing `paths` from a record whose versions are
 * `versions` (oldest first, each with its stored row as it is now): the
 * paths that held a value in some version, and each version's original
 * hash and residue, sealed as it was (its format, its `_prev`, its own
 * certificate if it is an earlier erasure). `campos` empty: nothing to erase.
 */
export function erasureCertificate (mod: ModuleDef, versions: readonly StoredVersion[], cipher: FieldCipher, paths: readonly string[], motivo: string): ErasureCertificate {
  const held = paths.filter((p) => versions.some((v) => Object.keys(erasedColumns(mod, v.datos, [p])).length > 0))
  const versiones = versions.map((v, i) => {
    const row = { ...v.datos, ...erasedColumns(mod, v.datos, paths) }
    const own = v.supresion === null ? undefined : certificateDigest(v.supresion, cipher)
    return { version: v.version, hash: v.hash, residuo: versionHash(mod, row, cipher, versions[i - 1]?.hash ?? '', sealOf(mod, v), own).hash }
  })
  return { motivo, campos: held, versiones }
}
