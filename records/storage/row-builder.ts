/**
 * One module's stored rows as a write makes them: declared fields as
 * column values (passwords hashed, encrypted values with their blind
 * indexes), the system fields of a new record, and the seal (`_hash`,
 * records/integrity/version-hash.ts).
 */
import type { Caller } from '../../core/access.js'
import type { FieldCipher } from '../../core/crypto.js'
import { typeOf } from '../../core/field-types/index.js'
import { hashPassword } from '../../core/passwords.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { SYSTEM_COLUMNS } from '../../core/system-fields.js'
import { nowSeconds } from '../../core/time.js'
import { blindIndexColumn, itemIndexColumn, searchableItems, valueColumn } from '../../db/columns.js'
import type { Row } from '../../db/module-entity.js'
import { changedFields } from '../integrity/chain.js'
import { versionHash } from '../integrity/version-hash.js'
import type { ColumnValue } from '../normalize.js'
import { encryptItems } from '../item-fields.js'
import { itemIndexesOf } from '../item-index.js'

/**
 * Passwords replaced by their Argon2id hash — done before any transaction
 * opens, so the slow hashing never holds a connection or a row lock.
 */
export async function hashPasswords (values: Map<FieldDef, ColumnValue>): Promise<Map<FieldDef, ColumnValue>> {
  // Copied only when a password is there to hash: most writes hold none.
  let out: Map<FieldDef, ColumnValue> | undefined
  for (const [f, v] of values) if (typeOf(f).writeOnly && v !== null) (out ??= new Map(values)).set(f, await hashPassword(v as string))
  return out ?? values
}

export class RowBuilder {
  /** Every column of the module's table: the system columns, then each field's value (and blind index). */
  readonly columns: readonly string[]

  /**
   * Every column null: what a new row starts from. Not frozen: V8 copies a
   * spread plain object in one step and a frozen one property by property,
   * ten times slower (docs/performance.md "Instants without the zone database").
   */
  private readonly empty: Readonly<Row>

  /** Whether the module has a password field (`hashPasswords` has work). */
  readonly hashesPasswords: boolean

  /** Structured arrays with searchable sub-fields, whose indexes a write keeps (records/item-index.ts). */
  private readonly indexedArrays: ReadonlySet<FieldDef>

  constructor (private readonly mod: ModuleDef, private readonly cipher: FieldCipher) {
    this.columns = [...SYSTEM_COLUMNS, ...mod.fields.flatMap((f) => f.searchable ? [valueColumn(f), blindIndexColumn(f)] : searchableItems(f).length > 0 ? [valueColumn(f), itemIndexColumn(f)] : [valueColumn(f)])]
    this.empty = Object.fromEntries(this.columns.map((c) => [c, null]))
    this.indexedArrays = new Set(mod.fields.filter((f) => searchableItems(f).length > 0))
    this.hashesPasswords = mod.fields.some((f) => typeOf(f).writeOnly)
  }

  /** Column values of the declared fields (passwords already hashed): encrypted and blind-indexed; written into `out`. */
  toColumns (id: string, values: Map<FieldDef, ColumnValue>, out: Row = {}): Row {
    for (const [f, v] of values) {
      if (f.encrypted) {
        const plaintext = v === null ? null : typeOf(f).toPlaintext(v)
        out[valueColumn(f)] = plaintext === null ? null : this.cipher.encrypt(plaintext, id, f.name)
        if (f.searchable) out[blindIndexColumn(f)] = plaintext === null ? null : this.cipher.blindIndex(this.mod.name, f.name, plaintext)
        continue
      }
      // A structured array's encrypted sub-fields, value by value (records/item-fields.ts), and its searchable ones' indexes (records/item-index.ts).
      out[valueColumn(f)] = v !== null && f.items !== undefined ? encryptItems(f, v, id, this.cipher) as ColumnValue : v
      if (this.indexedArrays.has(f)) out[itemIndexColumn(f)] = itemIndexesOf(this.mod, f, v, this.cipher)
    }
    return out
  }

  /** Sets `_hash` (docs/operator-guide.md "The hash chain") and returns the hashed payload, for change detection. */
  seal (row: Row, previousHash: string): Record<string, unknown> {
    const { hash, payload } = versionHash(this.mod, row, this.cipher, previousHash)
    row._hash = hash
    return payload
  }

  /** A new row with its system fields, sealed, and the fields its first history entry names. */
  newRow (id: string, stored: Map<FieldDef, ColumnValue>, caller: Caller): { row: Row, campos: string[] } {
    const now = nowSeconds()
    // One object: every column null, then the values, then the system fields (no second object to spread).
    const row = this.toColumns(id, stored, { ...this.empty })
    row._id = id
    row._created = now
    row._created_by = caller.id
    row._modified = now
    row._modified_by = caller.id
    row._version = 1
    row._deleted = null
    const payload = this.seal(row, '')
    return { row, campos: changedFields(this.mod, undefined, payload) }
  }
}
