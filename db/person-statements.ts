/**
 * The statement of the interested-party search (records/data-protection/
 * interested-party.ts; docs/user-guide.md "Personal data"): the records of
 * one module, deleted ones too, that hold a value in any of the columns
 * asked, each test an equality (a value or a blind index) or a jsonb array
 * that holds an element (a structured array's item, or its sub-field
 * indexes).
 * Each row says which tests it met.
 */
import { ormErrors } from './orm-errors.js'
import { quoteIdent } from './schema-renames.js'
import { queryRows, type Db } from './statement.js'

/** A column equal to a value (a plain value or a blind index), or a jsonb array holding an element (an item, a sub-field index). */
export type HoldingTest = { readonly column: string, readonly equals: string } | { readonly column: string, readonly contains: unknown }


/** The records of `table` meeting any of `tests`, oldest id first, with one flag per test (`m0`, `m1`…). */
export async function recordsHolding (db: Db, table: string, tests: readonly HoldingTest[]): Promise<Array<{ _id: string, _deleted: Date | string | null, met: boolean[] }>> {
  if (tests.length === 0) return []
  const conditions = tests.map((t) => 'equals' in t ? `${quoteIdent(t.column)} = ?` : `${quoteIdent(t.column)} @> ?::jsonb`)
  const params = tests.map((t) => 'equals' in t ? t.equals : JSON.stringify([t.contains]))
  const flags = conditions.map((c, i) => `coalesce(${c}, false) as m${i}`).join(', ')
  const sql = `select "_id", "_deleted", ${flags} from ${quoteIdent(table)} where ${conditions.map((c) => `(${c})`).join(' or ')} order by "_id"`
  const rows = await ormErrors(db, queryRows<Record<string, unknown>>(db, sql, [...params, ...params]))
  return rows.map((r) => ({ _id: r._id as string, _deleted: r._deleted as Date | string | null, met: tests.map((_, i) => r[`m${i}`] === true) }))
}
