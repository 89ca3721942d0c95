/**
 * Rows to what leaves the service: the API record (dates in the service
 * time zone, encrypted fields decrypted or withheld in `_restringidos`,
 * passwords never) and the plain form that enters the integrity hash.
 */
import type { FieldCipher } from '../core/crypto.js'
import { canonicalJson } from '../core/canonical.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { formatDateTime } from '../core/time.js'
import { valueColumn } from '../db/columns.js'
import type { Row } from '../db/module-entity.js'
import { CURRENT_SEAL, isSealed, type Seal } from './seal-format.js'

export interface ViewContext {
  readonly timeZone: string
  readonly cipher: FieldCipher
  /** Caller holds `{module}.descifrar`. */
  readonly canDecrypt: boolean
}

/** UTC instant as `YYYY-MM-DDTHH:MM:SSZ`: the time-zone-free form used in hashes. */
export function isoSeconds (d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

function asDate (v: unknown): Date {
  return v instanceof Date ? v : new Date(v as string)
}

/**
 * Plaintext stored inside an encrypted column, and digested into `_hash`:
 * strings as they are, anything else as canonical JSON (so an auditor in any
 * language can recompute the digest from the API's output).
 */
export function toPlaintext (value: unknown): string {
  return typeof value === 'string' ? value : canonicalJson(value)
}

function fromPlaintext (f: FieldDef, text: string): unknown {
  return f.type === 'array' || f.type === 'integer' || f.type === 'decimal' || f.type === 'boolean' ? JSON.parse(text) : text
}

/** How an instant is written: local for the API, UTC for the hash. */
type InstantFormat = (d: Date) => string

/** A stored (non-encrypted) value in API form, instants written by `instant`. */
function shown (f: FieldDef, v: unknown, instant: InstantFormat): unknown {
  if (v === null || v === undefined) return null
  switch (f.type) {
    case 'datetime': return instant(asDate(v))
    case 'decimal': return Number(v)
    case 'time': return String(v).slice(0, 5)
    default: return v
  }
}

/** The system fields other than `_hash`, instants written by `instant`. */
function systemFields (row: Row, instant: InstantFormat): Record<string, unknown> {
  return {
    _created: instant(asDate(row._created)),
    _created_by: row._created_by,
    _modified: instant(asDate(row._modified)),
    _modified_by: row._modified_by,
    _version: row._version,
    _deleted: row._deleted === null || row._deleted === undefined ? null : instant(asDate(row._deleted)),
  }
}

function decryptField (f: FieldDef, row: Row, cipher: FieldCipher): unknown {
  const stored = row[valueColumn(f)]
  if (stored === null || stored === undefined) return null
  return fromPlaintext(f, cipher.decrypt(stored as string, row._id as string, f.name))
}

export function toApiRecord (mod: ModuleDef, row: Row, ctx: ViewContext): Record<string, unknown> {
  const local: InstantFormat = (d) => formatDateTime(d, ctx.timeZone)
  const out: Record<string, unknown> = { _id: row._id }
  const restricted: string[] = []
  for (const f of mod.fields) {
    if (f.type === 'password') continue
    if (f.encrypted) {
      if (ctx.canDecrypt) out[f.name] = decryptField(f, row, ctx.cipher)
      else restricted.push(f.name)
      continue
    }
    out[f.name] = shown(f, row[valueColumn(f)], local)
  }
  const { _version, _deleted, ...audit } = systemFields(row, local)
  Object.assign(out, audit, { _version, _hash: row._hash, _deleted })
  if (restricted.length > 0) out._restringidos = restricted
  return out
}

/**
 * The record as it enters `_hash` (SPEC S7): field values in a time-zone-free
 * form; each encrypted field as an HMAC of its plaintext, never the plaintext;
 * which declared fields enter depends on the seal format (seal-format.ts).
 */
export function hashPayload (mod: ModuleDef, row: Row, cipher: FieldCipher, previousHash: string, seal: Seal = CURRENT_SEAL): Record<string, unknown> {
  const payload: Record<string, unknown> = { _id: row._id }
  for (const f of mod.fields) {
    const v = row[valueColumn(f)]
    if (!isSealed(seal, f.name, v)) continue
    payload[f.name] = f.encrypted && v !== null && v !== undefined
      ? cipher.digest(toPlaintext(decryptField(f, row, cipher)))
      : shown(f, v, isoSeconds)
  }
  return { ...payload, ...systemFields(row, isoSeconds), _prev: previousHash }
}
