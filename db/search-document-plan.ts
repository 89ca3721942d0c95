/**
 * The stored search document of a module table (db/search-sql.ts
 * `documentColumn`, a generated `tsvector` column) in a schema plan. It is
 * derived from the row, so two things the schema sync refuses or cannot do
 * for a data column are safe for it:
 *
 * - dropping it (its replacement, under a new name, comes in the same plan
 *   when the module's text fields change);
 * - dropping it and adding it back around a column type change: PostgreSQL
 *   refuses to change the type of a column a generated column reads, and a
 *   varchar that grows (the one type change the start makes by itself) is
 *   always read by the document. The table is rewritten once, as the
 *   widening alone would.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql'
import { DOCUMENT_COLUMN_PREFIX } from './search-sql.js'

const DOCUMENT = new RegExp(`^${DOCUMENT_COLUMN_PREFIX}[0-9a-f]{8}$`)
const DOCUMENT_DROP = new RegExp(`^alter table "[^"]+" drop column "${DOCUMENT_COLUMN_PREFIX}[0-9a-f]{8}"$`)
const TYPE_CHANGE_TABLE = /^alter table "(?:[^"]+"\.")?([^"]+)" alter column "[^"]+" type\b/i

/** `alter table "t" drop column "_search_…"`: loses nothing. */
export function isDocumentDrop (statement: string): boolean {
  return DOCUMENT_DROP.test(statement)
}

function quote (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** The document column the entity of `table` declares, with the statements that add it and its index. */
function declaredDocument (orm: MikroORM, table: string): { name: string, add: string[] } | undefined {
  const meta = Object.values(orm.getMetadata().getAll()).find((m) => m.tableName === table)
  const prop = meta === undefined ? undefined : Object.values(meta.properties).find((p) => DOCUMENT.test(p.name))
  if (meta === undefined || prop === undefined) return undefined
  const index = meta.indexes.find((i) => typeof i.expression === 'string' && i.expression.includes(`(${quote(prop.name)})`))
  return {
    name: prop.name,
    add: [
      `alter table ${quote(table)} add column ${quote(prop.name)} tsvector generated always as ${String(prop.generated)} null`,
      ...(index === undefined ? [] : [index.expression as string]),
    ],
  }
}

async function storedDocuments (em: EntityManager): Promise<Array<{ table: string, column: string }>> {
  return em.getConnection().execute<Array<{ table: string, column: string }>>(
    'select table_name as "table", column_name as "column" from information_schema.columns ' +
    `where table_schema = current_schema() and column_name like '${DOCUMENT_COLUMN_PREFIX.replace(/_/g, '\\_')}%'`,
    [], 'all', em.getTransactionContext())
}

/**
 * Refused statements as an operator would run them: with a column type
 * change, the stored documents of its table and the indexes the plan drops
 * go first (PostgreSQL refuses or fails the change while an index or a
 * generated column reads the column the old way); the next start adds back
 * what is declared.
 */
export async function withDocumentDrops (em: EntityManager, destructive: readonly string[], safe: readonly string[]): Promise<string[]> {
  const tables = new Set(destructive.map((s) => TYPE_CHANGE_TABLE.exec(s)?.[1]).filter((t): t is string => t !== undefined))
  if (tables.size === 0) return [...destructive]
  const drops = (await storedDocuments(em)).filter((d) => tables.has(d.table) && DOCUMENT.test(d.column) && !destructive.some((s) => s.includes(quote(d.column))))
  const indexDrops = safe.filter((s) => /^drop index "[^"]+"$/.test(s))
  return [...drops.map((d) => `alter table ${quote(d.table)} drop column ${quote(d.column)}`), ...indexDrops, ...destructive]
}

/**
 * `safe` with every table whose column type changes and that has a stored
 * document in the database reordered: its document columns dropped first
 * (their indexes go with them), then its type changes, then the rest as
 * planned; the declared document is added back (with its index) at the end
 * when the plan does not add it under a new name already.
 */
export async function withDocumentRebuilds (orm: MikroORM, em: EntityManager, safe: readonly string[]): Promise<string[]> {
  const tableOf = (s: string): string | undefined => TYPE_CHANGE_TABLE.exec(s)?.[1]
  const tables = [...new Set(safe.map(tableOf).filter((t): t is string => t !== undefined))]
  if (tables.length === 0) return [...safe]
  const existing = await storedDocuments(em)
  let rest = [...safe]
  const first: string[] = []
  const last: string[] = []
  for (const table of tables) {
    const columns = existing.filter((e) => e.table === table && DOCUMENT.test(e.column)).map((e) => e.column)
    if (columns.length === 0) continue
    // Statements of this table that only touch an old document: its drop, or the drop of its index (`<table>_search_<hash>_idx`).
    const old = (s: string): boolean => s.includes(`"${table}`) && /^(drop index|alter table "[^"]+" drop column) "[^"]+"$/.test(s) && columns.some((c) => s.includes(c))
    const changes = rest.filter((s) => tableOf(s) === table)
    rest = rest.filter((s) => tableOf(s) !== table && !old(s))
    first.push(...columns.map((c) => `alter table ${quote(table)} drop column ${quote(c)}`), ...changes)
    const declared = declaredDocument(orm, table)
    if (declared !== undefined && columns.includes(declared.name)) last.push(...declared.add)
  }
  return [...first, ...rest, ...last]
}
