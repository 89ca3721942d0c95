/**
 * A change of one stored row of a module, by id: the columns a write
 * changes (its declared values, `_modified`, `_version`, `_hash`, `_deleted`)
 * as one `update … where "_id" = ?`, bound as a create binds them
 * (db/insert-with-history.ts: jsonb columns as JSON text). The row is
 * already read and locked in the write's transaction
 * (records/storage/sql-module-storage.ts), which also appends its history entry.
 */
import type { Row } from './module-entity.js'
import type { InsertColumn } from './insert-with-history.js'
import { runStatement, type Db } from './statement.js'

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`

/**
 * The `changes` of row `id` of `table`; `columns`: the table's columns
 * with their jsonb flags. Errors are converted as the ORM's own writes'
 * are (unique violations, connection loss …).
 */
export async function updateRow (db: Db, table: string, columns: ReadonlyMap<string, InsertColumn>, id: string, changes: Row): Promise<void> {
  const sets: string[] = []
  const params: unknown[] = []
  for (const [name, v] of Object.entries(changes)) {
    const json = columns.get(name)?.json === true
    sets.push(`${ident(name)} = ${json ? '?::jsonb' : '?'}`)
    params.push(v === undefined || v === null ? null : json ? JSON.stringify(v) : v)
  }
  params.push(id)
  try {
    await runStatement(db, `update ${ident(table)} set ${sets.join(', ')} where "_id" = ?`, params)
  } catch (err) {
    throw db.getDriver().convertException(err as Error)
  }
}
