/**
 * A transaction on a fork of the EntityManager, opened and closed through
 * its connection instead of `em.transactional` / `em.commit`.
 *
 * Why: both bind work to an AsyncLocalStorage (`transactional` the fork,
 * as MikroORM's TransactionContext; `commit` its flush, as the unit of
 * work's "inside flush" flag). On Node 20 the first
 * `AsyncLocalStorage.run` turns on V8's promise hooks for the rest of the
 * process, so from then on every promise of every request, reads
 * included, pays a call into JavaScript: about 4% of a GET's CPU
 * (docs/performance.md). Here nothing needs either: every query is given
 * `tem` (or its transaction context) explicitly, and every write is a
 * native statement, never an entity persisted for a flush. Should one ever
 * be persisted, it is flushed before the commit, as MikroORM would.
 *
 * The same semantics otherwise: a transaction nested in another becomes
 * a savepoint of it; an error rolls back and is rethrown as it was (a
 * failed rollback, say on a lost connection, does not hide it).
 */
import { IsolationLevel } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'

export async function inTransaction<T> (em: EntityManager, work: (tem: EntityManager) => Promise<T>, opts: { isolationLevel?: IsolationLevel } = {}): Promise<T> {
  const tem = em.fork({ clear: false })
  const outer = em.getTransactionContext()
  await tem.begin({ ...opts, ...(outer !== undefined && { ctx: outer }) })
  const trx = tem.getTransactionContext()!
  const connection = tem.getConnection('write')
  try {
    const result = await work(tem)
    const uow = tem.getUnitOfWork()
    if (uow.getPersistStack().size > 0 || uow.getRemoveStack().size > 0) await tem.flush()
    await connection.commit(trx)
    return result
  } catch (err) {
    if (!trx.isCompleted()) await connection.rollback(trx).catch(() => undefined)
    throw err
  }
}

/** Whether the handle runs inside a transaction (its statements then see the transaction's writes). */
export function insideTransaction (em: EntityManager): boolean {
  return em.getTransactionContext() !== undefined
}

/** `inTransaction` at READ COMMITTED whatever the database's default (the global chain's sealer, records/integrity/global-chain.ts, says why). */
export async function inReadCommittedTransaction<T> (em: EntityManager, work: (tem: EntityManager) => Promise<T>): Promise<T> {
  return inTransaction(em, work, { isolationLevel: IsolationLevel.READ_COMMITTED })
}
