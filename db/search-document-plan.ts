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

/**
 * `safe` with every table whose column type changes and that has a stored
 * document in the database reordered: its document columns dropped first,
 * the declared one added back (with its index) after everything else.
 */
export async function withDocumentRebuilds (orm: MikroORM, em: EntityManager, safe: readonly string[]): Promise<string[]> {
  const tables = [...new Set(safe.map((s) => TYPE_CHANGE_TABLE.exec(s)?.[1]).filter((t): t is string => t !== undefined))]
  if (tables.length === 0) return [...safe]
  const existing = await em.getConnection().execute<Array<{ table: string, column: string }>>(
    'select table_name as "table", column_name as "column" from information_schema.columns ' +
    `where table_schema = current_schema() and column_name like '${DOCUMENT_COLUMN_PREFIX.replace(/_/g, '\\_')}%'`,
    [], 'all', em.getTransactionContext())
  let out = [...safe]
  const before: string[] = []
  const after: string[] = []
  for (const table of tables) {
    const columns = existing.filter((e) => e.table === table && DOCUMENT.test(e.column)).map((e) => e.column)
    if (columns.length === 0) continue
    const declared = declaredDocument(orm, table)
    const mentions = (s: string): boolean => s.includes(`"${table}"`) && (columns.some((c) => s.includes(quote(c))) || (declared !== undefined && s.includes(quote(declared.name))))
    out = out.filter((s) => !mentions(s))
    before.push(...columns.map((c) => `alter table ${quote(table)} drop column ${quote(c)}`))
    if (declared !== undefined) after.push(...declared.add)
  }
  return [...before, ...out, ...after]
}
