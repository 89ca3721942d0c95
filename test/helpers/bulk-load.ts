/**
 * Many rows written straight into a table by SQL, as the tests of plans
 * over 100,000 rows need (search.test.ts, scope.test.ts, list-plans.test.ts).
 * The table's secondary indexes are dropped first and built again after
 * from the definitions PostgreSQL reports for them: the same indexes, each
 * built once over every row instead of entry by entry. On the embedded
 * database search.test.ts's 100,000 rows took 19 s written into their
 * indexes, 4 s without them and 7 s to build them (docs/testing.md "How
 * long it takes"). Indexes behind a constraint (primary key, unique) stay.
 */
import type { TestDatabase } from './services.js'

export async function bulkLoad (db: TestDatabase, table: string, insert: string, params?: unknown[]): Promise<void> {
  const indexes = await db.query<{ name: string, definition: string }>(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition
       from pg_index i
      where i.indrelid = $1::regclass
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`, [table])
  for (const { name } of indexes) await db.query(`drop index ${name}`)
  try {
    await db.query(insert, params)
  } finally {
    // Built again also when the insert failed: the table keeps its indexes for the file's other tests.
    for (const { definition } of indexes) await db.query(definition)
  }
}
