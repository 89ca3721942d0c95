/**
 * A transaction on a fork of the EntityManager, opened and closed with
 * `begin` / `commit` / `rollback` instead of `em.transactional`.
 *
 * Why not `em.transactional`: it binds the fork to the transaction through
 * an AsyncLocalStorage (MikroORM's TransactionContext). On Node 20 the
 * first `AsyncLocalStorage.run` turns on V8's promise hooks for the rest
 * of the process, so from then on every promise of every request (reads
 * included) pays a call into JavaScript: about 3% of a GET's CPU
 * (README › Performance). Nothing here resolves the EntityManager from
 * a context: each query is given `tem` (or its transaction context)
 * explicitly, so the binding buys nothing.
 *
 * The same semantics otherwise: a transaction nested in another becomes
 * a savepoint of it; anything persisted on `tem` is flushed before the
 * commit; an error rolls back and is rethrown as it was (a failed
 * rollback, say on a lost connection, does not hide it).
 */
import type { IsolationLevel } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'

export async function inTransaction<T> (em: EntityManager, work: (tem: EntityManager) => Promise<T>, opts: { isolationLevel?: IsolationLevel } = {}): Promise<T> {
  const tem = em.fork({ clear: false })
  const outer = em.getTransactionContext()
  await tem.begin({ ...opts, ...(outer !== undefined && { ctx: outer }) })
  try {
    const result = await work(tem)
    await tem.commit()
    return result
  } catch (err) {
    if (tem.isInTransaction()) await tem.rollback().catch(() => undefined)
    throw err
  }
}
