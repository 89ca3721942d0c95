/**
 * Reads a module's rows as plain objects without making ORM entities: the
 * query is built by MikroORM's query builder from the same filter objects
 * (`where`, raw search fragments, order), and its result mapped by the
 * driver (column names, dates) — but no entity is created, registered in
 * the identity map or tracked for changes. The records layer only ever
 * reads rows to turn them into API records or to write them back by
 * explicit statements, so that bookkeeping was pure cost on every read
 * (issue 10: about a fifth of a GET's CPU in the server).
 */
import { LockMode, RawQueryFragment } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Row } from './module-entity.js'

export interface RowQuery {
  orderBy?: Array<Record<string, 'asc' | 'desc'>>
  limit?: number
  offset?: number
  /** Lock the rows for the transaction (SELECT … FOR UPDATE). */
  lock?: boolean
}

/** The columns a read selects, per entity: every one but the lazy ones (the stored search document, db/search-sql.ts). */
const selected = new WeakMap<object, string[]>()

function columnsOf (em: EntityManager, entity: string): string[] {
  const meta = em.getMetadata().find(entity)!
  let cols = selected.get(meta)
  if (cols === undefined) {
    cols = meta.props.filter((p) => p.lazy !== true && p.persist !== false).map((p) => p.name)
    selected.set(meta, cols)
  }
  return cols
}

function builder (em: EntityManager, entity: string, where: object, q: RowQuery) {
  const qb = em.createQueryBuilder<Row>(entity).select(columnsOf(em, entity) as never).where(where as never)
  if (q.orderBy !== undefined) qb.orderBy(q.orderBy as never)
  if (q.limit !== undefined) qb.limit(q.limit, q.offset ?? 0)
  if (q.lock === true) qb.setLockMode(LockMode.PESSIMISTIC_WRITE)
  return qb
}

/** The first row matching `where`, or null. */
export async function findRow (em: EntityManager, entity: string, where: object, lock = false): Promise<Row | null> {
  const rows = await builder(em, entity, where, { limit: 1, lock }).execute('all', true) as Row[]
  return rows[0] ?? null
}

/**
 * A page of rows and the exact count of all the matching rows, the two
 * queries sent together. Raw fragments in `where` or `orderBy` are made
 * and used inside this call (MikroORM keeps a registry of live fragments).
 */
export async function findRowsAndCount (em: EntityManager, entity: string, where: () => object, q: Omit<RowQuery, 'orderBy' | 'lock'> & { orderBy: () => RowQuery['orderBy'] }): Promise<[Row[], number]> {
  return RawQueryFragment.run(async () => {
    const w = where()
    const page = builder(em, entity, w, { ...q, orderBy: q.orderBy() }).execute('all', true) as Promise<Row[]>
    const count = em.createQueryBuilder<Row>(entity).where(w as never).getCount()
    return Promise.all([page, count])
  })
}
