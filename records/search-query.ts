/**
 * The search parts of a list query (docs/user-guide.md "Search"): `campo[contiene]`,
 * `campo[vacio]` and `q`, each as the condition its index serves
 * (db/search-sql.ts). Pure: conditions are ORM filters or SQL text with
 * bound values; client text is never part of the SQL.
 */
import { invalid } from '../core/errors.js'
import type { FieldCipher } from '../core/crypto.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { isCleanText } from '../core/text.js'
import { typeOf } from '../core/field-types/index.js'
import { comparesByValue } from '../db/columns.js'
import { containsCondition, emptyCondition, foldsSubstring, matchCondition, rankExpression, type SqlCondition } from '../db/search-sql.js'

/** A condition of a list: a filter (db/where-sql.ts), or a search condition in SQL (db/search-sql.ts). */
export type Condition = { where: Record<string, unknown> } | { sql: SqlCondition }

/** The longest `q` and `contiene` text (as long as any stored string field). */
const MAX_TEXT = 500

function escapeLike (s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** Lower case without accents, as `search_fold` does in the database (for enum values, compared here). */
function foldText (s: string): string {
  return s.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase()
}

/**
 * `contiene`: on a string or text field, case- and accent-insensitive
 * (served by the field's trigram index); on an enum field, the declared
 * values that contain the text (served by its b-tree); on an id (a `ref`,
 * `_id`, `_created_by` …), a case-insensitive substring as before.
 */
export function containsSearch (column: string, f: FieldDef | undefined, text: string): Condition {
  if (f !== undefined && f.enum !== undefined) {
    const needle = foldText(text)
    return { where: { [column]: { $in: f.enum.filter((v) => foldText(v).includes(needle)) } } }
  }
  if (f !== undefined && foldsSubstring(f)) return { sql: containsCondition(column, `%${escapeLike(text)}%`) }
  return { where: { [column]: { $ilike: `%${escapeLike(text)}%` } } }
}

/** The value of `vacio`: true or false. */
export function emptyFlag (key: string, text: string): boolean {
  if (text !== 'true' && text !== 'false') throw invalid(key, 'debe ser true o false')
  return text === 'true'
}

/**
 * `vacio`: no value (null, empty string, empty array) or a value. Each form
 * is one an index answers: a b-tree on the column (`is null`, `= ''`,
 * `> ''`), the blind index of an encrypted field (null or the index of the
 * empty text), or the "empty" index of a text or array field.
 */
export function emptySearch (column: string, f: FieldDef | undefined, empty: boolean, cipher: FieldCipher, module?: string): Condition {
  if (f?.encrypted === true) {
    // Each field has its own index key, so its module must be known.
    if (module === undefined) throw new Error(`emptySearch: the module of encrypted field ${f.name} is needed`)
    const blank = cipher.blindIndex(module, f.name, '')
    return { where: empty ? { $or: [{ [column]: null }, { [column]: blank }] } : { $and: [{ [column]: { $ne: null } }, { [column]: { $ne: blank } }] } }
  }
  const kind = f === undefined ? 'null' : typeOf(f).empty
  if (f !== undefined && (kind === 'array' || !comparesByValue(f))) return { sql: emptyCondition(f, empty) }
  if (kind === 'string') return { where: empty ? { $or: [{ [column]: null }, { [column]: '' }] } : { [column]: { $gt: '' } } }
  return { where: { [column]: empty ? null : { $ne: null } } }
}

export interface TextSearch {
  match: SqlCondition
  rank: SqlCondition
}

/** `q`: every word the start of a word (or a form of it) in the fields the module searches; any character is allowed, none is query syntax (db/prefix-query.ts). */
export function textSearch (mod: ModuleDef, words: string): TextSearch {
  if (!isCleanText(words)) throw invalid('q', 'contiene caracteres de control o texto mal formado')
  if (words.length > MAX_TEXT) throw invalid('q', `admite como máximo ${MAX_TEXT} caracteres`)
  if (!/[\p{L}\p{N}]/u.test(words)) throw invalid('q', 'debe contener al menos una palabra')
  const match = matchCondition(mod, words)
  const rank = rankExpression(mod, words)
  if (match === undefined || rank === undefined) throw invalid('q', 'este módulo no tiene campos de texto en los que buscar')
  return { match, rank }
}
