/**
 * Encrypted sub-fields of structured arrays (docs/user-guide.md "Structured
 * arrays"): each value is encrypted on its own like an encrypted field
 * (core/crypto.ts), bound to the record id and its path `testigos[2].dni`;
 * decrypted for callers who may, removed from every item for the others
 * (`_restringidos` names `testigos.dni`); digested in `_hash` from seal
 * format 4 (docs/operator-guide.md "The hash chain").
 *
 * Items stored before their sub-fields were declared hold plaintext (and
 * may be texts): a value that is not a ciphertext is shown and digested as
 * it is, and withheld like any value of an encrypted sub-field.
 */
import { keyIdOf, type FieldCipher } from '../core/crypto.js'
import { itemPlaintext, itemValue } from '../core/field-types/array-items.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'

type Item = Record<string, unknown>

/** A stored value as `FieldCipher.encrypt` writes it: `v1:<key id>:<iv>:<ciphertext>`. */
const ENVELOPE = /^v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*:[A-Za-z0-9+/]+=*$/

/** The encrypted sub-fields of a field's items (none for a plain array or any other field). */
export function encryptedItems (f: FieldDef): readonly FieldDef[] {
  return f.items === undefined ? [] : f.items.filter((s) => s.encrypted)
}

/** Fields of `mod` whose items have encrypted sub-fields. */
export function itemEncryptedFields (mod: ModuleDef): readonly FieldDef[] {
  return mod.fields.filter((f) => encryptedItems(f).length > 0)
}

/** `testigos.dni`: how `_restringidos`, the read log and the document name an encrypted sub-field. */
export function subFieldPaths (f: FieldDef): string[] {
  return encryptedItems(f).map((s) => `${f.name}.${s.name}`)
}

/** Additional authenticated data of one value: the field, its item and the sub-field. */
function aadField (f: FieldDef, i: number, sub: FieldDef): string {
  return `${f.name}[${i}].${sub.name}`
}

/** An item that is an object (items stored before their sub-fields were declared may be texts). */
export const isItem = (v: unknown): v is Item => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Whether a stored value is a ciphertext (else: plaintext stored before the declaration). */
export function isCiphertext (v: unknown): v is string {
  return typeof v === 'string' && ENVELOPE.test(v)
}

/** Each item with `change(sub, value, i)` applied to its non-null encrypted sub-fields; other items as they are. */
function mapEncrypted (f: FieldDef, items: unknown, change: (sub: FieldDef, value: unknown, i: number) => unknown): unknown {
  if (!Array.isArray(items)) return items
  const subs = encryptedItems(f)
  return items.map((item, i) => {
    if (!isItem(item)) return item
    let out: Item | undefined
    for (const s of subs) {
      const v = item[s.name]
      if (v === null || v === undefined) continue
      out ??= { ...item }
      out[s.name] = change(s, v, i)
    }
    return out ?? item
  })
}

/** Items as written: each encrypted sub-field's value encrypted (normalised values, records/normalize.ts). */
export function encryptItems (f: FieldDef, items: unknown, id: string, cipher: FieldCipher): unknown {
  return mapEncrypted(f, items, (s, v, i) => cipher.encrypt(itemPlaintext(v), id, aadField(f, i, s)))
}

/** The plaintext of one stored value: decrypted, or as stored before the declaration. */
export function plaintextOf (f: FieldDef, s: FieldDef, v: unknown, i: number, id: string, cipher: FieldCipher): string {
  return isCiphertext(v) ? cipher.decrypt(v, id, aadField(f, i, s)) : itemPlaintext(v)
}

/** Items as a caller who may decrypt sees them. Throws when a ciphertext does not decrypt, like an encrypted field. */
export function decryptItems (f: FieldDef, items: unknown, id: string, cipher: FieldCipher): unknown {
  return mapEncrypted(f, items, (s, v, i) => isCiphertext(v) ? itemValue(s, cipher.decrypt(v, id, aadField(f, i, s))) : v)
}

/** Items as a caller without `descifrar` sees them: encrypted sub-fields removed. */
export function withholdItems (f: FieldDef, items: unknown): unknown {
  const names = encryptedItems(f).map((s) => s.name)
  if (!Array.isArray(items)) return items
  return items.map((item) => {
    if (!isItem(item) || !names.some((n) => Object.hasOwn(item, n))) return item
    const out = { ...item }
    for (const n of names) delete out[n]
    return out
  })
}

/**
 * Items with their keys as a GET shows them (the response schema's order,
 * core/field-types/array-items.ts `itemOutput`): the declared sub-fields in
 * declared order, then any other key as stored. An export writes its
 * records itself, and jsonb keeps keys in its own order (shortest first).
 */
function itemsInDeclaredOrder (f: FieldDef, items: unknown): unknown {
  if (f.items === undefined || !Array.isArray(items)) return items
  const subs = f.items
  return items.map((item) => {
    if (!isItem(item)) return item
    const out: Item = {}
    for (const s of subs) if (Object.hasOwn(item, s.name)) out[s.name] = item[s.name]
    for (const key of Object.keys(item)) if (!Object.hasOwn(out, key)) out[key] = item[key]
    return out
  })
}

/** API records with every structured array's items in declared order, changed in place (fresh records of an export, records/export-stream.ts). */
export function recordsInDeclaredOrder (mod: ModuleDef): (records: Array<Record<string, unknown>>) => Array<Record<string, unknown>> {
  const structured = mod.fields.filter((f) => f.items !== undefined)
  return (records) => {
    if (structured.length === 0) return records
    for (const rec of records) {
      for (const f of structured) if (Array.isArray(rec[f.name])) rec[f.name] = itemsInDeclaredOrder(f, rec[f.name])
    }
    return records
  }
}

/** Items as they enter `_hash` in seal format 4: each encrypted sub-field's value as the HMAC of its plaintext. */
export function digestItems (f: FieldDef, items: unknown, id: string, cipher: FieldCipher): unknown {
  return mapEncrypted(f, items, (s, v, i) => cipher.digest(plaintextOf(f, s, v, i, id, cipher)))
}

/**
 * Whether an API record shows a value under `name`: a field, or a sub-field
 * path `testigos.dni` in some item (the read log's `campos`, docs/operator-guide.md "Read log").
 */
export function holdsValue (rec: Record<string, unknown>, name: string): boolean {
  const dot = name.indexOf('.')
  if (dot < 0) return rec[name] !== null && rec[name] !== undefined
  const items = rec[name.slice(0, dot)]
  const sub = name.slice(dot + 1)
  return Array.isArray(items) && items.some((item) => isItem(item) && item[sub] !== null && item[sub] !== undefined)
}

/** Key ids of the ciphertexts in a field's items (for /verificar's "key not configured" check). */
export function itemKeyIds (f: FieldDef, items: unknown): string[] {
  const out: string[] = []
  mapEncrypted(f, items, (_s, v) => { if (isCiphertext(v)) out.push(keyIdOf(v)!); return v })
  return out
}

/** Items with every ciphertext under an old key encrypted again under the current one; undefined when none is (key rotation). */
export function reencryptItems (f: FieldDef, items: unknown, id: string, cipher: FieldCipher): unknown {
  let changed = false
  const out = mapEncrypted(f, items, (s, v, i) => {
    if (!isCiphertext(v) || keyIdOf(v) === cipher.currentKeyId) return v
    changed = true
    return cipher.encrypt(cipher.decrypt(v, id, aadField(f, i, s)), id, aadField(f, i, s))
  })
  return changed ? out : undefined
}
