/**
 * The SQL of search (docs/user-guide.md "Search"), in one place so that a query and the index
 * meant to serve it are written by the same function and cannot drift
 * apart (PostgreSQL uses an expression index only for the very same
 * expression):
 *
 * - `search_fold(text)`: lower case without accents (`Camión` → `camion`),
 *   an immutable wrapper of the `unaccent` extension, so indexes may use it;
 * - `contiene` on string and text fields: `search_fold(col) like …`, served
 *   by a trigram GIN index (`pg_trgm`) on the fields that declare
 *   `contains_index` (elsewhere the same condition reads the table);
 * - `q`: a stored `tsvector` column per module over the fields it declares
 *   (`full_text`, by default its text fields; folded, with both the Spanish
 *   stems and the words as written), with a GIN index that serves the
 *   prefix query of db/prefix-query.ts;
 * - `vacio` on text and array fields: a b-tree over the value's size on the
 *   indexed ones (the other types use the b-tree on the column).
 */
import { createHash } from 'node:crypto'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { operatorsOf, typeOf } from '../core/field-types/index.js'
import { valueColumn } from './columns.js'
import { storedName } from './identifier.js'
import { QUERY_FUNCTION } from './prefix-query.js'

/** A condition (or an order key) as SQL text with `?` placeholders and their values; db/row-query.ts numbers and binds them. */
export interface SqlCondition {
  readonly sql: string
  readonly params: readonly unknown[]
}

export const FOLD_FUNCTION = 'search_fold'
const CONFIG = "'spanish'::regconfig"

function ident (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** A column folded for comparison. */
function folded (column: string): string {
  return `${FOLD_FUNCTION}(${ident(column)})`
}

/** Whether `contiene` on this field is the folded, trigram-indexed search (string and text values; not enums, not encrypted). */
export function foldsSubstring (f: FieldDef): boolean {
  return typeOf(f).textSearch && f.enum === undefined && !f.encrypted
}

/** `search_fold(col) like search_fold(pattern)`; the pattern is already escaped for LIKE (`\` escapes). */
export function containsCondition (column: string, pattern: string): SqlCondition {
  return { sql: `${folded(column)} like ${FOLD_FUNCTION}(?)`, params: [pattern] }
}

/**
 * The size of a text or array value (0 when null), the expression its
 * `vacio` index holds: `= 0` and `> 0` are both ranges of a b-tree (a
 * boolean "is empty" would not do: PostgreSQL rewrites its negation into
 * `<>`, which no index serves).
 */
function sizeExpression (f: FieldDef): string {
  const c = ident(valueColumn(f))
  return typeOf(f).empty === 'array' ? `coalesce(jsonb_array_length(${c}), 0)` : `coalesce(octet_length(${c}), 0)`
}

/** Whether `vacio` on this field needs its own index (a text or array value, which has no b-tree). */
function needsEmptyIndex (f: FieldDef): boolean {
  return f.indexed && !f.encrypted && typeOf(f).empty !== 'null' && !typeOf(f).indexed && operatorsOf(f).includes('vacio')
}

/** `vacio` of a text or array field, served by its expression index. */
export function emptyCondition (f: FieldDef, empty: boolean): SqlCondition {
  return { sql: `${sizeExpression(f)} ${empty ? '=' : '>'} 0`, params: [] }
}

/** The fields `q` searches: those the module declares (`full_text`; by default its text fields). */
export function documentFields (mod: ModuleDef): readonly FieldDef[] {
  return mod.fullText
}

/**
 * The text-search document of a row: its searchable fields, folded, as the
 * Spanish stems (with their positions, for `ts_rank`) and the words as
 * written (`simple`, positions stripped). A prefix of `q` is matched
 * against the words as written, not the stems: a stem can be shorter than
 * what was typed (`tranquilamente` is stored as `tranquil`, of which
 * `tranquilam` is no prefix), and the stem of a prefix is no prefix of the
 * word (`cervan` stems to `cerv`, which would find `cerveza`).
 */
function documentExpression (mod: ModuleDef): string | undefined {
  const fields = documentFields(mod)
  if (fields.length === 0) return undefined
  const text = `${FOLD_FUNCTION}(${fields.map((f) => `coalesce(${ident(valueColumn(f))}::text, '')`).join(" || ' ' || ")})`
  return `to_tsvector(${CONFIG}, ${text}) || strip(to_tsvector('simple'::regconfig, ${text}))`
}

/** What a stored search document column is called: `_search_` and a hash of its expression. */
export const DOCUMENT_COLUMN_PREFIX = '_search_'

export interface DocumentColumn {
  /** `_search_<hash of the expression>`: a field added to the module gives a new column. */
  readonly name: string
  /** The generated column's expression (PostgreSQL computes and stores it on every write). */
  readonly expression: string
}

/**
 * The stored text-search document of a module's rows (a generated
 * `tsvector` column), or undefined when the module has no text to search.
 * Stored rather than an expression index, so that a match is checked and
 * ranked from the row as it is on disk, without parsing and stemming its
 * text again on every read (the 50 ms of docs/user-guide.md "Search"). Named after a hash of its
 * expression, like an index: the start-up sync adds the new column and
 * drops the old one (db/schema-sync.ts lets that drop through: the column
 * is derived, it holds nothing that is not in the row).
 */
export function documentColumn (mod: ModuleDef): DocumentColumn | undefined {
  const doc = documentExpression(mod)
  if (doc === undefined) return undefined
  return { name: `${DOCUMENT_COLUMN_PREFIX}${createHash('sha256').update(doc).digest('hex').slice(0, 8)}`, expression: doc }
}

const tsquery = `${QUERY_FUNCTION}(?)`

/** `q`: every word the start of a word of the document, or of its Spanish stem (db/prefix-query.ts); undefined when the module has no text to search. */
export function matchCondition (mod: ModuleDef, words: string): SqlCondition | undefined {
  const doc = documentColumn(mod)
  return doc === undefined ? undefined : { sql: `${ident(doc.name)} @@ ${tsquery}`, params: [words] }
}

/** The relevance of a row to `q` (higher first). */
export function rankExpression (mod: ModuleDef, words: string): SqlCondition | undefined {
  const doc = documentColumn(mod)
  return doc === undefined ? undefined : { sql: `ts_rank(${ident(doc.name)}, ${tsquery})`, params: [words] }
}

export interface SearchIndex {
  readonly name: string
  readonly expression: string
}

/**
 * The search indexes of a module, for its entity. MikroORM compares
 * expression indexes by name only, so the full-text index is named after a
 * hash of its expression: a field added to the module gives a new name, and
 * the start-up sync builds the new index and drops the old one.
 */
export function searchIndexes (mod: ModuleDef): SearchIndex[] {
  const table = ident(mod.table)
  const out: SearchIndex[] = []
  for (const f of mod.fields) {
    const column = valueColumn(f)
    if (f.containsIndex && foldsSubstring(f) && operatorsOf(f).includes('contiene')) {
      const name = storedName(`${mod.table}_${column}_trgm_idx`)
      out.push({ name, expression: `create index ${ident(name)} on ${table} using gin (${folded(column)} gin_trgm_ops)` })
    }
    if (needsEmptyIndex(f)) {
      const name = storedName(`${mod.table}_${column}_vacio_idx`)
      out.push({ name, expression: `create index ${ident(name)} on ${table} ((${sizeExpression(f)}))` })
    }
  }
  const doc = documentColumn(mod)
  if (doc !== undefined) {
    const name = storedName(`${mod.table}_${doc.name.slice(1)}_idx`)
    out.push({ name, expression: `create index ${ident(name)} on ${table} using gin (${ident(doc.name)})` })
  }
  return out
}
