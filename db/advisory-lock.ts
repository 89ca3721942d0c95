/**
 * PostgreSQL advisory locks held until the end of the caller's transaction:
 * how instances take turns at work only one may do at a time (sealing the
 * global chain, the blind-index upgrade). `key` is a constant shared by
 * every instance, written into the text (it is never client input).
 */
import { queryRows, type Db } from './statement.js'

/** Waits until the lock is free, then holds it. */
export async function waitForTransactionLock (db: Db, key: number): Promise<void> {
  await queryRows(db, `select true as ok from (select pg_advisory_xact_lock(${key})) l`)
}

/** Holds the lock if it is free; false when another transaction holds it. */
export async function tryTransactionLock (db: Db, key: number): Promise<boolean> {
  const [lock] = await queryRows<{ ok: boolean }>(db, `select pg_try_advisory_xact_lock(${key}) as ok`)
  return lock?.ok === true
}
