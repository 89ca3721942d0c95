/** What the service sent to PostgreSQL during a call, read off knex's `query` event (db/driver.ts emits its own statements there too). */
import type { EntityManager } from '@mikro-orm/postgresql'

export interface SentQuery {
  sql: string
  /** Values as parameters; empty when they were inlined into the text (embedded mode's unnamed statements, db/driver.ts). */
  bindings: unknown[]
  /** The prepared statement's name; absent: unnamed. */
  name?: string
}

/** The statements `run` sent through `em`'s connection, in order. */
export async function queriesOf (em: Pick<EntityManager, 'getConnection'>, run: () => Promise<unknown>): Promise<SentQuery[]> {
  const seen: SentQuery[] = []
  const knex = em.getConnection().getKnex()
  const onQuery = (q: { sql: string, bindings?: unknown[], name?: string }): void => { seen.push({ sql: q.sql, bindings: q.bindings ?? [], ...(q.name !== undefined && { name: q.name }) }) }
  knex.on('query', onQuery)
  try {
    await run()
  } finally {
    knex.off('query', onQuery)
  }
  return seen
}
