/**
 * The integrity chain (docs/operator-guide.md "The hash chain"). `_hash` of version n is SHA-256 of the
 * canonical JSON of the record at n with `_prev` = the hash of version n-1
 * ('' for version 1): version-hash.ts, the one formula. Verification
 * recomputes every stored version from the history, each under the seal
 * format it was written with (seal-format.ts), checks the versions
 * run 1..n without a gap, and that the live row is the last of them: an
 * edit, insertion or deletion made behind the service's back shows as the
 * first version where the chain breaks. Each searchable encrypted field's
 * blind index must be the one its value gives (an index copied from another
 * record would make a search find the wrong record). Then the record is
 * checked against the global chain and its checkpoints (global-chain-verify.ts).
 */
import type { Db } from '../../db/statement.js'
import { canonicalJson } from '../../core/canonical.js'
import { keyIdOf, type FieldCipher } from '../../core/crypto.js'
import { MOTIVOS } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import type { Row } from '../../db/module-entity.js'
import { versionsOf } from '../history.js'
import { currentSeal, sealOf, type Seal } from './seal-format.js'
import { versionHash } from './version-hash.js'
import { blindIndexColumn, itemIndexColumn, searchableItems, valueColumn } from '../../db/columns.js'
import { storedItemIndexes } from '../item-index.js'
import type { Checkpoints } from './checkpoints.js'
import { verifyInGlobalChain } from './global-chain-verify.js'
import { itemKeyIds } from '../item-fields.js'
import type { ErasureCertificate } from '../../db/history-entity.js'
import { certificateDigest, erasedFields } from './residue.js'

/** An erasure of personal data, as verification names it (docs/user-guide.md "Personal data"). */
export interface ErasureSummary<When = Date> {
  version: number
  fecha: When
  usuario: string
  motivo: string
  campos: string[]
}

export interface Verdict<When = Date> {
  valido: boolean
  /** When valid: each erasure of the record's personal data, oldest first. */
  supresiones?: Array<ErasureSummary<When>>
  /** First version at which the chain does not hold. */
  version_rota?: number
  /** What does not hold (core/errors.ts MOTIVOS), when valido is false. */
  motivo?: string
  /** The evidence file whose stored bytes do not hold (records/files/verify-files.ts). */
  archivo?: string
}

/**
 * Declared fields whose hashed form differs between two payloads (all the
 * non-null ones for a first version): the `campos` of a history entry. A
 * field left out of a payload (seal format 2, or declared after it was
 * sealed) is null, so the two formats compare alike.
 */
export function changedFields (mod: ModuleDef, before: Record<string, unknown> | undefined, after: Record<string, unknown>): string[] {
  const hashed = (payload: Record<string, unknown> | undefined, name: string): string => canonicalJson(payload?.[name] ?? null)
  return mod.fields.map((f) => f.name).filter((name) => before === undefined
    ? (after[name] ?? null) !== null // what `hashed` would make 'null' of: a payload holds no NaN (validated numbers)
    : hashed(before, name) !== hashed(after, name))
}

/**
 * Payload and hash a stored row (or history snapshot) would have, given the
 * previous version's hash; undefined when a ciphertext no longer decrypts
 * (tampered). A value under a key that is simply not configured is an
 * operations problem, not tampering: it throws (500, logged).
 */
function recompute (mod: ModuleDef, row: Row, cipher: FieldCipher, prev: string, seal: Seal, erasure?: string): { hash: string, payload: Record<string, unknown> } | undefined {
  for (const f of mod.fields) {
    const kids = f.encrypted ? [keyIdOf(String(row[valueColumn(f)] ?? ''))] : itemKeyIds(f, row[valueColumn(f)])
    for (const kid of kids) {
      if (kid !== undefined && /^[0-9a-f]{8}$/.test(kid) && !cipher.knowsKeyId(kid)) {
        throw new Error(`${mod.name} ${String(row._id)}: ${f.name} is encrypted with key ${kid}, which is not configured (ENCRYPTION_KEYS)`)
      }
    }
  }
  try {
    return versionHash(mod, row, cipher, prev, seal, erasure)
  } catch {
    return undefined // a ciphertext that no longer decrypts was tampered with
  }
}

const time = (v: unknown): number => new Date(v as string | Date).getTime()

/** The action a version must record, from the deletion marks of it and the one before (an erasure changes none). */
function actionOf (version: number, before: Row | undefined, now: Row, recorded: string): string {
  if (version === 1) return 'crear'
  if (recorded === 'suprimir' && (before?._deleted ?? null) === (now._deleted ?? null)) return 'suprimir'
  const was = before?._deleted !== null && before?._deleted !== undefined
  const is = now._deleted !== null && now._deleted !== undefined
  return !was && is ? 'eliminar' : was && !is ? 'restaurar' : 'editar'
}

/** Whether every blind index of a stored row (present in it) is the one its value gives. */
function blindIndexesHold (mod: ModuleDef, row: Row, cipher: FieldCipher): boolean {
  for (const f of mod.fields) {
    if (!f.searchable || !Object.hasOwn(row, blindIndexColumn(f))) continue
    const stored = row[valueColumn(f)]
    let expected: string | null = null
    try {
      if (stored !== null && stored !== undefined) expected = cipher.blindIndex(mod.name, f.name, cipher.decrypt(stored as string, row._id as string, f.name))
    } catch {
      return false
    }
    if ((row[blindIndexColumn(f)] ?? null) !== expected) return false
  }
  // A structured array's searchable sub-fields: the record's indexes, when it has them, are those its items' values give
  // (records/item-index.ts). None (a row written before the sub-field was searchable) keeps it out of a person's search
  // until `rotate-keys --reindexar`, and misattributes nothing (docs/decisions.md "A person's data is found…").
  for (const f of mod.fields) {
    if (searchableItems(f).length === 0 || (row[itemIndexColumn(f)] ?? null) === null) continue
    let expected: string[] | null
    try {
      expected = storedItemIndexes(mod, f, row[valueColumn(f)], row._id as string, cipher)
    } catch {
      return false
    }
    if (canonicalJson(row[itemIndexColumn(f)] ?? null) !== canonicalJson(expected)) return false
  }
  return true
}

/**
 * Where the chain breaks when a version's row is nowhere. The row travels with
 * the entry after it (its `anterior`) or is the live row (docs/decisions.md
 * "Each version stored once"): when that entry is missing (a gap) or the live
 * row claims a later version, the fault is that missing version, as when each
 * entry held its own row (integrity.test.ts "a deleted history row", "a live
 * row whose _version was changed"); otherwise the row itself was removed.
 */
function missingRowAt (version: number, next: { version: number } | undefined, liveVersion: number): number {
  if (next !== undefined) return next.version === version + 1 ? version : version + 1
  return liveVersion > version ? version + 1 : version
}

export async function verifyChain (em: Db, mod: ModuleDef, live: Row, cipher: FieldCipher, checkpoints?: Checkpoints): Promise<Verdict> {
  const local = await verifyVersions(em, mod, live, cipher)
  if (!local.valido || checkpoints === undefined) return local
  return (await verifyInGlobalChain(em, mod, live, checkpoints)) ?? local
}

async function verifyVersions (em: Db, mod: ModuleDef, live: Row, cipher: FieldCipher): Promise<Verdict> {
  const versions = await versionsOf(em, mod, live)
  const broken = (version: number, motivo: keyof typeof MOTIVOS = 'VERSION'): Verdict => ({ valido: false, version_rota: version, motivo: MOTIVOS[motivo] })
  // Each version's covering erasure: the newest one written after it (docs/decisions.md "Erasing personal data keeps the chain").
  const covering: Array<ErasureCertificate | undefined> = []
  let newer: ErasureCertificate | undefined
  for (let i = versions.length - 1; i >= 0; i--) {
    covering[i] = newer
    if (versions[i]!.accion === 'suprimir' && versions[i]!.supresion !== null) newer = versions[i]!.supresion!
  }
  const erased = erasedFields(versions.flatMap((v) => v.supresion?.campos ?? []))
  let prev = ''
  let before: { row: Row, payload: Record<string, unknown>, seal: Seal, covered: boolean } | undefined
  for (const [i, v] of versions.entries()) {
    const expected = i + 1
    if (v.version !== expected) return broken(expected)
    const snapshot = v.datos
    if (Object.keys(snapshot).length === 0) return broken(missingRowAt(v.version, versions[i + 1], live._version as number))
    if (snapshot._version !== v.version || snapshot._hash !== v.hash || snapshot._id !== live._id) return broken(v.version)
    if ((v.accion === 'suprimir') !== (v.supresion !== null)) return broken(v.version)
    const seal = sealOf(mod, v)
    const got = recompute(mod, snapshot, cipher, prev, seal, v.supresion === null ? undefined : certificateDigest(v.supresion, cipher))
    // A version an erasure covers holds as its residue, which the certificate gives beside its original hash.
    const cover = covering[i]
    const line = cover?.versiones.find((x) => x.version === v.version)
    if (cover !== undefined && line?.hash !== v.hash) return broken(v.version)
    if (got === undefined || got.hash !== (line?.residuo ?? v.hash)) return broken(v.version)
    // The entry's own columns must say what its snapshot says.
    if (v.usuario !== snapshot._modified_by || time(v.fecha) !== time(snapshot._modified)) return broken(v.version)
    if (v.accion !== actionOf(v.version, before?.row, snapshot, v.accion)) return broken(v.version)
    // The write compared the version before in the new version's format (format 4 digests what 3 kept as stored).
    const compared = before === undefined || before.seal.format === seal.format ? before?.payload : recompute(mod, before.row, cipher, '', seal)?.payload
    const changed = changedFields(mod, compared, got.payload)
    // Beside erased values, the fields a version changed show only where something else changed too.
    const nearErasure = cover !== undefined || before?.covered === true || v.accion === 'suprimir'
    if (nearErasure
      ? changed.some((f) => !v.campos.includes(f)) || v.campos.some((f) => !changed.includes(f) && !erased.has(f))
      : canonicalJson(v.campos) !== canonicalJson(changed)) return broken(v.version)
    if (!blindIndexesHold(mod, snapshot, cipher)) return broken(v.version, 'INDICE_CIEGO')
    prev = v.hash
    before = { row: snapshot, payload: got.payload, seal, covered: cover !== undefined }
  }
  const last = versions.length
  const liveVersion = live._version as number
  if (liveVersion !== last) return broken(Math.min(liveVersion, last + 1))
  const previous = last >= 2 ? versions[last - 2]!.hash : ''
  // The live row is its last version, sealed as that version was.
  const seal = last >= 1 ? sealOf(mod, versions[last - 1]!) : currentSeal(mod)
  const erasure = versions[last - 1]?.supresion
  if (live._hash !== prev || recompute(mod, live, cipher, previous, seal, erasure === null || erasure === undefined ? undefined : certificateDigest(erasure, cipher))?.hash !== live._hash) return broken(liveVersion)
  if (!blindIndexesHold(mod, live, cipher)) return broken(liveVersion, 'INDICE_CIEGO')
  const supresiones = versions.filter((v) => v.supresion !== null).map((v) => ({
    version: v.version, fecha: new Date(v.fecha), usuario: v.usuario, motivo: v.supresion!.motivo, campos: v.supresion!.campos,
  }))
  return supresiones.length > 0 ? { valido: true, supresiones } : { valido: true }
}
