/**
 * The API record of a row (records/record-view.ts `toApiRecord`) as one
 * function per module and decryption right, generated once: an object
 * literal with the module's keys in their order, each value read from its
 * column and shown by its field type: a fraction of what a loop storing
 * keys one by one into a fresh object costs (docs/performance.md "Figures
 * behind the code's choices"; a list page shows 20 records). Like fast-json-stringify's serializers, the code is built
 * from the registry only: keys and columns are written as JSON string
 * literals, and values are never part of the code.
 */
import type { FieldCipher } from '../core/crypto.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { SYSTEM_FIELDS } from '../core/system-fields.js'
import { asStored } from '../core/field-types/common.js'
import { FIELD_TYPES_IMPL, typeOf, type FieldTypeImpl, type InstantFormat } from '../core/field-types/index.js'
import { valueColumn } from '../db/columns.js'
import type { Row } from '../db/module-entity.js'
import { decryptItems, encryptedItems, subFieldPaths, withholdItems } from './item-fields.js'

/** Decrypts the stored value of an encrypted field of a row (null when empty). */
export type Decrypt = (f: FieldDef, row: Row, cipher: FieldCipher) => unknown

/** Builds the API record of one row; `local` writes instants in the service zone. */
export type RecordView = (row: Row, local: InstantFormat, cipher: FieldCipher) => Record<string, unknown>

/** Shows a structured array's stored items: encrypted sub-fields decrypted or withheld (records/item-fields.ts). */
type ShowItems = (items: unknown, row: Row, cipher: FieldCipher) => unknown

/** What one key of the record is: a column shown by its type, or an encrypted field decrypted first. */
interface Entry {
  readonly key: string
  readonly type: FieldTypeImpl
  readonly column?: string
  readonly encrypted?: FieldDef
  readonly items?: ShowItems
}

/**
 * The code of one record view. `T[i]` shows entry i's value; `F[i]` is an
 * encrypted entry's field, `decrypt` reads it.
 */
function build (entries: readonly Entry[], restricted: readonly string[], decrypt: Decrypt): RecordView {
  const parts: string[] = []
  entries.forEach((e, i) => {
    const read = e.encrypted === undefined ? `row[${JSON.stringify(e.column)}]` : `decrypt(F[${i}], row, cipher)`
    const show = e.items !== undefined ? `I[${i}](v, row, cipher)` : e.type.view === asStored ? 'v' : `T[${i}](v, local)`
    parts.push(`${JSON.stringify(e.key)}: (v = ${read}) === null || v === undefined ? null : ${show}`)
  })
  if (restricted.length > 0) parts.push(`"_restringidos": ${JSON.stringify(restricted)}`)
  const make = new Function('T', 'F', 'I', 'decrypt', `return function recordView (row, local, cipher) {\n  let v\n  return {\n    ${parts.join(',\n    ')}\n  }\n}`) as
    (T: ReadonlyArray<FieldTypeImpl['view']>, F: ReadonlyArray<FieldDef | undefined>, I: ReadonlyArray<ShowItems | undefined>, decrypt: Decrypt) => RecordView
  return make(entries.map((e) => e.type.view), entries.map((e) => e.encrypted), entries.map((e) => e.items), decrypt)
}

/**
 * The record view of `mod`: encrypted fields decrypted (`canDecrypt`), or
 * withheld and named in `_restringidos`; with `only`, just those keys
 * (`campos`, records/fields-query.ts).
 */
export function buildRecordView (mod: ModuleDef, canDecrypt: boolean, decrypt: Decrypt, only?: ReadonlySet<string>): RecordView {
  const system = (leads: boolean): Entry[] => SYSTEM_FIELDS.filter((s) => s.leads === leads && (only === undefined || only.has(s.name))).map((s) => ({ key: s.name, column: s.name, type: FIELD_TYPES_IMPL[s.type] }))
  const entries: Entry[] = system(true)
  const restricted: string[] = []
  for (const f of mod.fields) {
    const type = typeOf(f)
    if (type.writeOnly || (only !== undefined && !only.has(f.name))) continue
    if (encryptedItems(f).length > 0) {
      // A structured array with encrypted sub-fields: decrypted in each item, or withheld from each and named `testigos.dni`.
      const items: ShowItems = canDecrypt ? (v, row, cipher) => decryptItems(f, v, row._id as string, cipher) : (v) => withholdItems(f, v)
      entries.push({ key: f.name, column: valueColumn(f), type, items })
      if (!canDecrypt) restricted.push(...subFieldPaths(f))
    } else if (!f.encrypted) entries.push({ key: f.name, column: valueColumn(f), type })
    else if (canDecrypt) entries.push({ key: f.name, type, encrypted: f })
    else restricted.push(f.name)
  }
  entries.push(...system(false))
  return build(entries, restricted, decrypt)
}
