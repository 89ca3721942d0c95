/**
 * Rows to what leaves the service: the API record (dates in the service
 * time zone, encrypted fields decrypted or withheld in `_restringidos`,
 * passwords never) and the plain form that enters the integrity hash.
 */
import type { FieldCipher } from '../core/crypto.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { SYSTEM_FIELDS } from '../core/system-fields.js'
import { formatDateTime, isoText } from '../core/time.js'
import { valueColumn } from '../db/columns.js'
import type { Row } from '../db/module-entity.js'
import { FIELD_TYPES_IMPL, typeOf, type FieldTypeImpl, type InstantFormat } from '../core/field-types/index.js'
import { currentSeal, isSealed, sealKeyInput, type Seal } from './integrity/seal-format.js'
import { buildRecordView, type RecordView } from './view-builder.js'
import type { FieldSelection } from './fields-query.js'
import { projectedView } from './projected-views.js'
import { digestItems } from './item-fields.js'
import { payloadObject, type PayloadObject } from './payload-object.js'

export interface ViewContext {
  readonly timeZone: string
  readonly cipher: FieldCipher
  /** Caller holds `{module}.descifrar`. */
  readonly canDecrypt: boolean
}

/** The last instant isoSeconds wrote: a new version's `_created` and `_modified` are one instant. */
let lastInstant = NaN
let lastIso = ''

/** UTC instant as `YYYY-MM-DDTHH:MM:SSZ`: the time-zone-free form used in hashes. */
export function isoSeconds (d: Date): string {
  const ms = d.getTime()
  if (ms === lastInstant) return lastIso
  lastIso = isoText(d, false)
  lastInstant = ms
  return lastIso
}

/** A stored (non-encrypted) value in API form, instants written by `instant`; empty is null. */
function shown (type: FieldTypeImpl, v: unknown, instant: InstantFormat): unknown {
  return v === null || v === undefined ? null : type.view(v, instant)
}

/** The system fields that enter the hash payload, with their type: worked out once, used for every record. */
const SEALED_SYSTEM: ReadonlyArray<readonly [string, FieldTypeImpl]> = SYSTEM_FIELDS.filter((s) => s.sealed).map((s) => [s.name, FIELD_TYPES_IMPL[s.type]] as const)

function decryptField (f: FieldDef, row: Row, cipher: FieldCipher): unknown {
  const stored = row[valueColumn(f)]
  if (stored === null || stored === undefined) return null
  return typeOf(f).fromPlaintext(cipher.decrypt(stored as string, row._id as string, f.name))
}

/** Each module's record views, without and with decryption (records/view-builder.ts), made on first use. */
const views = new WeakMap<ModuleDef, [RecordView | undefined, RecordView | undefined]>()
/** Instants in each service time zone. */
const localFormats = new Map<string, InstantFormat>()

/** The API record of `row`; with `fields`, only the fields `campos` named (records/projected-views.ts). */
export function toApiRecord (mod: ModuleDef, row: Row, ctx: ViewContext, fields?: FieldSelection): Record<string, unknown> {
  let view: RecordView
  if (fields !== undefined) view = projectedView(mod, ctx.canDecrypt, fields, decryptField)
  else {
    let pair = views.get(mod)
    if (pair === undefined) views.set(mod, pair = [undefined, undefined])
    const which = ctx.canDecrypt ? 1 : 0
    view = pair[which] ?? (pair[which] = buildRecordView(mod, ctx.canDecrypt, decryptField))
  }
  let local = localFormats.get(ctx.timeZone)
  if (local === undefined) localFormats.set(ctx.timeZone, local = (d) => formatDateTime(d, ctx.timeZone))
  return view(row, local, ctx.cipher)
}

/** One member of a hash payload: a system field, a declared field, `_prev` or `_clave`. */
type PayloadPart =
  | { readonly key: string, readonly system: FieldTypeImpl }
  | { readonly key: string, readonly field: FieldDef }
  | { readonly key: '_prev' | '_clave' }

/**
 * Each module's payload members in canonical order (core/canonical.ts
 * then writes the payload without sorting it; docs/performance.md "A
 * create beside the ceiling's"), and the function that makes a payload of
 * their values (payload-object.ts). Which of them a payload holds is decided per row.
 */
interface PayloadPlan {
  readonly parts: readonly PayloadPart[]
  readonly make: PayloadObject
}

const payloadPlans = new WeakMap<ModuleDef, PayloadPlan>()

function payloadPlan (mod: ModuleDef): PayloadPlan {
  let plan = payloadPlans.get(mod)
  if (plan === undefined) {
    const parts: PayloadPart[] = [
      ...SEALED_SYSTEM.map(([key, system]) => ({ key, system })),
      ...mod.fields.map((field) => ({ key: field.name, field })),
      { key: '_prev' }, { key: '_clave' },
    ]
    parts.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    plan = { parts, make: payloadObject(parts.map((p) => p.key)) }
    payloadPlans.set(mod, plan)
  }
  return plan
}

/**
 * The record as it enters `_hash` (docs/operator-guide.md "The hash chain"): field values in a time-zone-free
 * form; each encrypted field as an HMAC of its plaintext, never the plaintext;
 * which declared fields enter depends on the seal format (integrity/seal-format.ts),
 * format 3 adds the keyed `_clave`, and format 4 digests the encrypted
 * sub-fields of structured arrays (records/item-fields.ts). Its members are
 * set in canonical order.
 */
export function hashPayload (mod: ModuleDef, row: Row, cipher: FieldCipher, previousHash: string, seal: Seal = currentSeal(mod)): Record<string, unknown> {
  const { parts, make } = payloadPlan(mod)
  const values = new Array<unknown>(parts.length)
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if ('system' in part) values[i] = shown(part.system, row[part.key], isoSeconds)
    else if ('field' in part) {
      const f = part.field
      const v = row[valueColumn(f)]
      if (!isSealed(seal, f.name, v)) continue
      const type = typeOf(f)
      values[i] = f.encrypted && v !== null && v !== undefined
        ? cipher.digest(type.toPlaintext(decryptField(f, row, cipher)))
        : seal.format === 4 && f.items !== undefined && v !== null && v !== undefined
          ? digestItems(f, v, row._id as string, cipher)
          : shown(type, v, isoSeconds)
    } else if (part.key === '_prev') values[i] = previousHash
    else if (seal.format >= 3) values[i] = cipher.digest(sealKeyInput(row._id as string, row._version as number))
  }
  return make(values)
}
