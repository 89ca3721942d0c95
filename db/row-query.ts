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

/**
 * Rows of a filter the records layer's vocabulary covers (db/where-sql.ts),
 * run as a prepared statement, the same rows as the query builder's;
 * undefined when the filter needs the query builder.
 */
async function direct (em: EntityManager, entity: string, where: object, q: RowQuery): Promise<Row[] | undefined> {
  const connection = em.getConnection()
  if (!(connection instanceof ServiceConnection)) return undefined
  const params: unknown[] = []
  const cond = whereSql(where, params)
  const order = q.orderBy === undefined ? '' : orderSql(q.orderBy)
  if (cond === undefined || order === undefined) return undefined
  const plan = planOf(em, entity)
  let sql = `${plan.select} where ${cond}`
  if (order !== '') sql += ` order by ${order}`
  if (q.limit !== undefined) sql += ` limit ${q.limit}`
  // The limit is one of few values; an offset could be any, so it is a parameter (one statement for every page).
  if (q.offset !== undefined && q.offset > 0) sql += ` offset $${params.push(q.offset)}`
  if (q.lock === true) sql += ' for update'
  return connection.rows(sql, params, em.getTransactionContext())
}

/** The exact number of rows of a filter the vocabulary covers; undefined when it needs the query builder. */
async function directCount (em: EntityManager, entity: string, where: object): Promise<number | undefined> {
  const connection = em.getConnection()
  if (!(connection instanceof ServiceConnection)) return undefined
  const params: unknown[] = []
  const cond = whereSql(where, params)
  if (cond === undefined) return undefined
  const rows = await connection.rows(`select count(*)::int as n${planOf(em, entity).from} where ${cond}`, params, em.getTransactionContext())
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
  const rows = await direct(em, entity, where, { limit: 1, lock }) ?? await builder(em, entity, where, { limit: 1, lock }).execute('all', true) as Row[]
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
  if (typeof where !== 'function' && typeof q.orderBy !== 'function') {
    // The vocabulary is the same for the page and its total: both or neither.
    const [rows, total] = await Promise.all([direct(em, entity, where, { ...q, orderBy: q.orderBy }), directCount(em, entity, where)])
    if (rows !== undefined && total !== undefined) return [rows, total]
  }
  return RawQueryFragment.run(async () => {
    const w = typeof where === 'function' ? where() : where
    const orderBy = typeof q.orderBy === 'function' ? q.orderBy() : q.orderBy
    const page = builder(em, entity, w, { ...q, orderBy }).execute('all', true) as Promise<Row[]>
    const count = em.createQueryBuilder<Row>(entity).where(w as never).getCount()
    return Promise.all([page, count])
  })
}
