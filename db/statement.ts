/**
 * The one way a statement of `db/` runs on the caller's handle: inside its
 * transaction when it has one, through the service's connection
 * (db/driver.ts) otherwise. `db/` files name their statements as functions
 * (`findRow`, `appendReadLog`, …) and run them with these two; nothing
 * outside `db/` writes SQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql'

/** The database handle the records layer passes down: a request's or a job's EntityManager fork. */
export type Db = EntityManager

/** The rows a statement returns. `?` placeholders, values in `params`. */
export async function queryRows<T> (db: Db, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  return await db.getConnection().execute<T[]>(sql, params as unknown[], 'all', db.getTransactionContext())
}

/** A statement run for its effect; answers the rows it touched. */
export async function runStatement (db: Db, sql: string, params: readonly unknown[] = []): Promise<number> {
  const res = await db.getConnection().execute<{ affectedRows: number }>(sql, params as unknown[], 'run', db.getTransactionContext())
  return res.affectedRows
}
