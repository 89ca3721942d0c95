/**
 * Reads a module's rows as plain objects without making ORM entities (no
 * identity map, no change tracking: the records layer only turns rows into
 * API records or writes them back by explicit statements; that bookkeeping
 * was about a fifth of a GET's server CPU, issue 10). A filter and order
 * of the records layer's vocabulary (db/where-sql.ts) are written as SQL
 * here and run through the connection (db/driver.ts: a named prepared
 * statement where that is safe); anything else (raw search fragments) is
 * built by MikroORM's query builder, its result mapped by the driver alike.
 */
import { LockMode, RawQueryFragment } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Row } from './module-entity.js'
import { ServiceConnection } from './driver.js'
import { orderSql, whereSql } from './where-sql.js'

export interface RowQuery {
  orderBy?: Array<Record<string, 'asc' | 'desc'>>
  limit?: number
  offset?: number
  /** Lock the rows for the transaction (SELECT … FOR UPDATE). */
  lock?: boolean
}

/** What a read of one entity selects: every column but the lazy ones (the stored search document, db/search-sql.ts). */
interface ReadPlan {
  readonly columns: string[]
  /** `select <columns> from <table>` */
  readonly select: string
  readonly from: string
}

const plans = new WeakMap<object, ReadPlan>()

function planOf (em: EntityManager, entity: string): ReadPlan {
  const meta = em.getMetadata().find<Row>(entity)!
  let plan = plans.get(meta)
  if (plan === undefined) {
    const props = meta.props.filter((p) => p.lazy !== true && p.persist !== false)
    const from = ` from "${meta.tableName}"`
    const selected = props.map((p) => p.fieldNames[0] === p.name ? `"${p.name}"` : `"${p.fieldNames[0]}" as "${p.name}"`)
    plan = { columns: props.map((p) => p.name), select: `select ${selected.join(', ')}${from}`, from }
    plans.set(meta, plan)
  }
  return plan
}

/** A filter (and order) of the vocabulary as SQL with its values; undefined when it needs the query builder. */
interface Compiled {
  readonly cond: string
  readonly order: string
  readonly params: unknown[]
}

function compile (where: object, orderBy: RowQuery['orderBy']): Compiled | undefined {
  const params: unknown[] = []
  const cond = whereSql(where, params)
  const order = orderBy === undefined ? '' : orderSql(orderBy)
  return cond === undefined || order === undefined ? undefined : { cond, order, params }
}

function serviceConnection (em: EntityManager): ServiceConnection | undefined {
  const connection = em.getConnection()
  return connection instanceof ServiceConnection ? connection : undefined
}

/** Rows of a compiled filter, the same rows and values as the query builder's. */
async function direct (connection: ServiceConnection, em: EntityManager, entity: string, c: Compiled, q: RowQuery): Promise<Row[]> {
  const params = [...c.params]
  let sql = `${planOf(em, entity).select} where ${c.cond}`
  if (c.order !== '') sql += ` order by ${c.order}`
  if (q.limit !== undefined) sql += ` limit ${q.limit}`
  // An offset can be any number: as a parameter, every page of a list has the same text.
  if (q.offset !== undefined && q.offset > 0) sql += ` offset $${params.push(q.offset)}`
  if (q.lock === true) sql += ' for update'
  return connection.rows(sql, params, em.getTransactionContext())
}

/** The exact number of rows of a compiled filter. */
async function directCount (connection: ServiceConnection, em: EntityManager, entity: string, c: Compiled): Promise<number> {
  const rows = await connection.rows(`select count(*)::int as n${planOf(em, entity).from} where ${c.cond}`, c.params, em.getTransactionContext())
  return rows[0]!.n as number
}

function builder (em: EntityManager, entity: string, where: object, q: RowQuery) {
  const qb = em.createQueryBuilder<Row>(entity).select(planOf(em, entity).columns as never).where(where as never)
  if (q.orderBy !== undefined) qb.orderBy(q.orderBy as never)
  if (q.limit !== undefined) qb.limit(q.limit, q.offset ?? 0)
  if (q.lock === true) qb.setLockMode(LockMode.PESSIMISTIC_WRITE)
  return qb
}

/** The first row matching `where`, or null. */
export async function findRow (em: EntityManager, entity: string, where: object, lock = false): Promise<Row | null> {
  const connection = serviceConnection(em)
  const compiled = connection === undefined ? undefined : compile(where, undefined)
  const rows = compiled === undefined
    ? await builder(em, entity, where, { limit: 1, lock }).execute('all', true) as Row[]
    : await direct(connection!, em, entity, compiled, { limit: 1, lock })
  return rows[0] ?? null
}

/**
 * A page of rows and the exact count of all the matching rows, the two
 * queries sent together. A filter or order with raw fragments (search) is
 * given as functions that make them, called inside this call (MikroORM
 * keeps a registry of live fragments); one without goes straight to
 * PostgreSQL when db/where-sql.ts covers it.
 */
export async function findRowsAndCount (em: EntityManager, entity: string, where: object | (() => object), q: Omit<RowQuery, 'orderBy' | 'lock'> & { orderBy: RowQuery['orderBy'] | (() => RowQuery['orderBy']) }): Promise<[Row[], number]> {
  const connection = serviceConnection(em)
  const compiled = connection === undefined || typeof where === 'function' || typeof q.orderBy === 'function' ? undefined : compile(where, q.orderBy)
  if (compiled !== undefined) {
    return Promise.all([direct(connection!, em, entity, compiled, { limit: q.limit, offset: q.offset }), directCount(connection!, em, entity, compiled)])
  }
  return RawQueryFragment.run(async () => {
    const w = typeof where === 'function' ? where() : where
    const orderBy = typeof q.orderBy === 'function' ? q.orderBy() : q.orderBy
    const page = builder(em, entity, w, { ...q, orderBy }).execute('all', true) as Promise<Row[]>
    const count = em.createQueryBuilder<Row>(entity).where(w as never).getCount()
    return Promise.all([page, count])
  })
}
