/**
 * Reads and counts a module's rows as plain objects without making ORM
 * entities (no identity map, no change tracking: the records layer only
 * turns rows into API records or writes them back by explicit statements;
 * that bookkeeping was about a fifth of a GET's server CPU, docs/performance.md).
 * The one way the records layer queries a module's rows: its filter and
 * order (db/where-sql.ts, the only compiler of a `Where`) and the search
 * conditions (db/search-sql.ts) are written as SQL here and run through
 * the connection (db/driver.ts: a named prepared statement where that is
 * safe). A filter outside the vocabulary is a programmer error: a
 * TypeError, never another query path.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Row } from './module-entity.js'
import { ServiceConnection } from './driver.js'
import { orderSql, whereSql, type Where } from './where-sql.js'
import { numbered } from './placeholders.js'
import type { SqlCondition } from './search-sql.js'

export interface RowQuery {
  orderBy?: Array<Record<string, 'asc' | 'desc'>>
  limit?: number
  offset?: number
  /** Lock the rows for the transaction (SELECT … FOR UPDATE). */
  lock?: boolean
  /** Read only these columns (row keys), not every one (docs/user-guide.md "Choosing fields and related records (campos, expandir)"). */
  columns?: readonly string[]
}

/** What a read of one entity selects: every column but the lazy ones (the stored search document, db/search-sql.ts). */
interface ReadPlan {
  /** `select <columns> from <table>` */
  readonly select: string
  readonly from: string
}

const plans = new WeakMap<object, ReadPlan>()

function planOf (em: EntityManager, entity: string, columns?: readonly string[]): ReadPlan {
  const meta = em.getMetadata().find<Row>(entity)!
  let plan = plans.get(meta)
  if (plan === undefined) {
    plan = selectOf(meta.tableName, meta.props.filter((p) => p.lazy !== true && p.persist !== false))
    plans.set(meta, plan)
  }
  // A projection names only known columns (records/fields-query.ts): written from the metadata, never from client text.
  return columns === undefined ? plan : selectOf(meta.tableName, meta.props.filter((p) => p.persist !== false && columns.includes(p.name)))
}

function selectOf (table: string, props: ReadonlyArray<{ name: string, fieldNames: string[] }>): ReadPlan {
  const from = ` from "${table}"`
  const selected = props.map((p) => p.fieldNames[0] === p.name ? `"${p.name}"` : `"${p.fieldNames[0]}" as "${p.name}"`)
  return { select: `select ${selected.join(', ')}${from}`, from }
}

/** A filter (and order) as SQL with its values. */
interface Compiled {
  readonly cond: string
  /** Values of `cond`, which the count takes alone. */
  readonly params: unknown[]
  readonly order: string
  /** Values of `order` (a relevance), numbered after those of `cond`. */
  readonly orderParams: unknown[]
}

function compile (where: Where, orderBy: RowQuery['orderBy'], search: readonly SqlCondition[] = [], rank?: SqlCondition): Compiled {
  const params: unknown[] = []
  let cond = whereSql(where, params)
  const order = orderBy === undefined ? '' : orderSql(orderBy)
  // The filter may be an `or` at its top: it is bracketed before anything is ANDed to it.
  if (search.length > 0) cond = [`(${cond})`, ...search.map((c) => `(${numbered(c, params)})`)].join(' and ')
  const orderParams: unknown[] = []
  if (rank === undefined) return { cond, params, order, orderParams }
  const all = [...params]
  const relevance = `${numbered(rank, all)} desc`
  return { cond, params, order: order === '' ? relevance : `${relevance}, ${order}`, orderParams: all.slice(params.length) }
}

/** The service's connection: db/open.ts opens every database, PostgreSQL and embedded alike, with db/driver.ts. */
export function serviceConnection (em: EntityManager): ServiceConnection {
  const connection = em.getConnection()
  if (!(connection instanceof ServiceConnection)) throw new TypeError('module rows are read through the service\'s driver (db/driver.ts): open the database with db/open.ts')
  return connection
}

/**
 * The SQL of every row matching `where` and the search conditions, in
 * `orderBy`, with its values: what db/row-cursor.ts reads in batches.
 */
export function selectRowsSql (em: EntityManager, entity: string, where: Where, orderBy: NonNullable<RowQuery['orderBy']>, search: readonly SqlCondition[] = [], columns?: readonly string[]): { text: string, params: unknown[] } {
  const c = compile(where, orderBy, search)
  return { text: `${planOf(em, entity, columns).select} where ${c.cond} order by ${c.order}`, params: c.params }
}

/** Rows of a compiled filter. */
async function direct (connection: ServiceConnection, em: EntityManager, entity: string, c: Compiled, q: RowQuery): Promise<Row[]> {
  const params = [...c.params, ...c.orderParams]
  let sql = `${planOf(em, entity, q.columns).select} where ${c.cond}`
  if (c.order !== '') sql += ` order by ${c.order}`
  if (q.limit !== undefined) sql += ` limit ${q.limit}`
  // An offset can be any number: as a parameter, every page of a list has the same text.
  if (q.offset !== undefined && q.offset > 0) sql += ` offset $${params.push(q.offset)}`
  if (q.lock === true) sql += ' for update'
  return connection.rows(sql, params, em.getTransactionContext())
}

/**
 * A page that one live index serves alone (`onLiveIndex`, db/record-indexes.ts):
 * its keys are read off that index in order (an index-only scan of the
 * value's entries), then the rows by primary key. PostgreSQL's generic plan
 * for it is that scan whatever the value, where a generic plan of the page
 * read straight may walk the default order's index instead, so this
 * statement is named and keeps one plan (db/prepared-statements.ts).
 */
async function keyedPage (connection: ServiceConnection, em: EntityManager, entity: string, c: Compiled, q: { limit: number, offset?: number, direction: string, columns?: readonly string[] | undefined }): Promise<Row[]> {
  const params = [...c.params]
  const plan = planOf(em, entity, q.columns)
  let keys = `select "_id" as "_key", "_created" as "_key_created"${plan.from} where ${c.cond} order by ${c.order} limit ${q.limit}`
  if (q.offset !== undefined && q.offset > 0) keys += ` offset $${params.push(q.offset)}`
  const sql = `${plan.select} join (${keys}) "_page" on "_id" = "_page"."_key" order by "_page"."_key_created" ${q.direction}, "_page"."_key" ${q.direction}`
  return connection.rows(sql, params, em.getTransactionContext(), true)
}

/** The exact number of rows of a compiled filter. */
async function directCount (connection: ServiceConnection, em: EntityManager, entity: string, c: Compiled): Promise<number> {
  const rows = await connection.rows(`select count(*)::int as n${planOf(em, entity).from} where ${c.cond}`, c.params, em.getTransactionContext())
  return rows[0]!.n as number
}

/** The first row matching `where`, or null. */
export async function findRow (em: EntityManager, entity: string, where: Where, lock = false, columns?: readonly string[]): Promise<Row | null> {
  const rows = await direct(serviceConnection(em), em, entity, compile(where, undefined), { limit: 1, lock, ...(columns !== undefined && { columns }) })
  return rows[0] ?? null
}

/** The rows matching `where` (and `search`) in an order, a batch at a time, optionally locked (the key-rotation batches, an embedded export). */
export async function findRows (em: EntityManager, entity: string, where: Where, q: RowQuery & { search?: readonly SqlCondition[] }): Promise<Row[]> {
  return direct(serviceConnection(em), em, entity, compile(where, q.orderBy, q.search), q)
}

/**
 * How many rows match `where` (a reference or a unique value already
 * taken). Errors are converted as the ORM's own queries' are (unique
 * violations, connection loss …).
 */
export async function countRows (em: EntityManager, entity: string, where: Where): Promise<number> {
  const connection = serviceConnection(em)
  const compiled = compile(where, undefined)
  try {
    return await directCount(connection, em, entity, compiled)
  } catch (err) {
    throw em.getDriver().convertException(err as Error)
  }
}

/**
 * Rows of a statement over the rows matching `where` and `search` (an
 * aggregate, db/aggregate-sql.ts): `build` is handed the table
 * (` from "<table>"`), the condition, and its values, to which it pushes
 * its own. Errors are converted as the ORM's own queries' are.
 */
export async function selectOver (em: EntityManager, entity: string, where: Where, search: readonly SqlCondition[], build: (from: string, cond: string, params: unknown[]) => string): Promise<Row[]> {
  const connection = serviceConnection(em)
  const compiled = compile(where, undefined, search)
  const params = [...compiled.params]
  const sql = build(planOf(em, entity).from, compiled.cond, params)
  try {
    return await connection.rows(sql, params, em.getTransactionContext())
  } catch (err) {
    throw em.getDriver().convertException(err as Error)
  }
}

/** A page: its order, size and position, and the search conditions ANDed with the filter. */
export interface PageQuery extends Pick<RowQuery, 'orderBy' | 'limit' | 'offset' | 'columns'> {
  /** Conditions as SQL with `?` placeholders (db/search-sql.ts). */
  search?: readonly SqlCondition[]
  /** A relevance: the page is ordered by it, highest first, then by `orderBy`. */
  rank?: SqlCondition
  /** One live index alone serves this page (db/record-indexes.ts `liveIndexColumn`): it is read by its keys. */
  onLiveIndex?: boolean
}

/** A page of rows and the exact count of all the matching rows, the two queries sent together. */
export async function findRowsAndCount (em: EntityManager, entity: string, where: Where, q: PageQuery): Promise<[Row[], number]> {
  const connection = serviceConnection(em)
  const compiled = compile(where, q.orderBy, q.search, q.rank)
  const keyed = q.onLiveIndex === true && q.orderBy !== undefined && (q.search ?? []).length === 0 && q.rank === undefined && q.limit !== undefined
  const page = keyed
    ? keyedPage(connection, em, entity, compiled, { limit: q.limit!, offset: q.offset, direction: Object.values(q.orderBy![0]!)[0]!, columns: q.columns })
    : direct(connection, em, entity, compiled, { limit: q.limit, offset: q.offset, ...(q.columns !== undefined && { columns: q.columns }) })
  return Promise.all([page, directCount(connection, em, entity, compiled)])
}
