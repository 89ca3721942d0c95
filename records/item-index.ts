/**
 * Blind indexes of a structured array's searchable encrypted sub-fields
 * (`searchable: true` on a sub-field, docs/administrator-guide.md
 * "Structured arrays"): one jsonb array per record beside the items
 * (db/columns.ts `itemIndexColumn`), every item's value of every such
 * sub-field as the keyed index of its path (`testigos.dni`), sorted, each
 * once; null when none. Kept by every write, checked by /verificar,
 * rebuilt by `npm run rotate-keys -- --reindexar`; what the search of a
 * person's data reads (records/data-protection/interested-party.ts).
 */
import type { FieldCipher } from '../core/crypto.js'
import { itemPlaintext } from '../core/field-types/array-items.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { searchableItems } from '../db/columns.js'
import { isItem, plaintextOf } from './item-fields.js'


function collect (mod: ModuleDef, f: FieldDef, items: unknown, cipher: FieldCipher, plain: (s: FieldDef, v: unknown, i: number) => string): string[] | null {
  if (!Array.isArray(items)) return null
  const found = new Set<string>()
  const subs = searchableItems(f)
  items.forEach((item, i) => {
    if (!isItem(item)) return
    for (const s of subs) {
      const v = item[s.name]
      if (v !== null && v !== undefined) found.add(cipher.blindIndex(mod.name, `${f.name}.${s.name}`, plain(s, v, i)))
    }
  })
  return found.size === 0 ? null : [...found].sort()
}

/** From items as written (plaintext, normalised). */
export function itemIndexesOf (mod: ModuleDef, f: FieldDef, items: unknown, cipher: FieldCipher): string[] | null {
  return collect(mod, f, items, cipher, (_s, v) => itemPlaintext(v))
}

/** From items as stored (their values decrypted); throws when one does not decrypt. */
export function storedItemIndexes (mod: ModuleDef, f: FieldDef, items: unknown, id: string, cipher: FieldCipher): string[] | null {
  return collect(mod, f, items, cipher, (s, v, i) => plaintextOf(f, s, v, i, id, cipher))
}
