/**
 * The driver's named prepared statements (db/driver.ts,
 * db/prepared-statements.ts; a statement whose result's shape is known is
 * read through db/driver-internals.ts), against the database of
 * either mode (embedded mode prepares and runs them in SQL,
 * db/session-statements.ts):
 * - one read run again and again, on one connection and across the pool,
 *   returns the same rows and values every time: instants as Dates, dates
 *   as text, json parsed, numeric and bigint as text, nulls; under one
 *   statement name;
 * - after a column's type changed under the statement (another instance
 *   widened it), a read outside a transaction is answered with the new
 *   values and the statement gets a new name; inside a transaction the
 *   stale plan fails that transaction (PostgreSQL's answer), and the next
 *   one reads fine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { EntityManager } from '@mikro-orm/postgresql'
import { createHarness, type Harness } from '../helpers/app.js'
import { usingPostgres } from '../helpers/services.js'
import { queriesOf } from '../helpers/sql-capture.js'
import type { ServiceConnection } from '../../db/driver.js'
import { inTransaction } from '../../db/transaction.js'
import { isStalePlan } from '../../core/postgres-errors.js'

let h: Harness
let app: FastifyInstance
let connection: ServiceConnection

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  connection = app.orm.em.getConnection() as ServiceConnection
  await h.db.query('create table shapes (id int primary key, name varchar(10), at timestamptz, day date, doc jsonb, amount numeric(14,2), n bigint)')
  await h.db.query(`insert into shapes values (1, 'uno', '2026-01-02 03:04:05+00', '2026-01-02', '{"a":[1,2]}', 12.5, 9007199254740993),
                                              (2, null, null, null, null, null, null)`)
}, 120_000)
afterAll(async () => { await h.close() })

/** A statement's name: on PGlite with its instance's tag (db/session-statements.ts). */
const NAME = usingPostgres ? /^s\d+_[0-9a-f]{24}$/ : /^e[0-9a-f]{8}_s\d+_[0-9a-f]{24}$/
const SELECT = 'select id, name, at, day, doc, amount, n from shapes where id = $1'
const ONE = { id: 1, name: 'uno', at: new Date('2026-01-02T03:04:05Z'), day: '2026-01-02', doc: { a: [1, 2] }, amount: '12.50', n: '9007199254740993' }
const TWO = { id: 2, name: null, at: null, day: null, doc: null, amount: null, n: null }

/** The statement names the reads of `run` were sent under (undefined: unnamed). */
const namesOf = async (run: () => Promise<unknown>): Promise<Array<string | undefined>> =>
  (await queriesOf(app.orm.em, run)).filter((q) => /from shapes/.test(q.sql)).map((q) => q.name)

/**
 * Reads on as many pooled connections at once as the pool holds (db/open.ts: 10 on PostgreSQL), so the
 * statement is prepared on each; embedded mode names nothing, and its one session takes one transaction at a time.
 */
async function onEveryConnection (read: (em: EntityManager) => Promise<unknown>): Promise<void> {
  const size = usingPostgres ? 10 : 1
  let arrived = 0
  let release!: () => void
  const all = new Promise<void>((resolve) => { release = resolve })
  await Promise.all(Array.from({ length: size }, async () => inTransaction(app.orm.em.fork(), async (tem) => {
    await read(tem)
    if (++arrived === size) release()
    await all // each transaction holds its connection until every one has read
  })))
}

describe('named statements through the public query config', () => {
  it('one read run again and again returns the same rows and values, on one connection and across the pool, under one name', async () => {
    const reads: unknown[] = []
    const names = await namesOf(async () => {
      await inTransaction(app.orm.em.fork(), async (tem) => {
        for (const id of [1, 2, 1, 2, 1, 99, 1]) reads.push(await connection.rows(SELECT, [id], tem.getTransactionContext()))
      })
      for (const id of [1, 2, 1]) reads.push(await connection.rows(SELECT, [id]))
    })
    expect(reads).toEqual([[ONE], [TWO], [ONE], [TWO], [ONE], [], [ONE], [ONE], [TWO], [ONE]])
    expect(names).toHaveLength(10)
    expect(names[0]).toMatch(NAME)
    expect(new Set(names)).toEqual(new Set([names[0]]))
  })

  it('after a column changed type under the statement, a read outside a transaction gets the new values under a new name', async () => {
    const text = 'select id, name from shapes where id = $1'
    const before = await namesOf(async () => onEveryConnection(async (tem) => connection.rows(text, [1], tem.getTransactionContext())))
    await h.db.query('alter table shapes alter column name type text')
    await h.db.query("update shapes set name = 'uno, más largo que diez' where id = 1")
    const reads: unknown[] = []
    const after = await namesOf(async () => {
      for (let i = 0; i < 3; i++) reads.push(await connection.rows(text, [1]))
    })
    expect(reads).toEqual(Array.from({ length: 3 }, () => [{ id: 1, name: 'uno, más largo que diez' }]))
    // Every connection (PGlite: its one session) held the statement: the first read met the stale plan and was
    // answered unnamed; the next ones run under a new name.
    expect(before[0]).toMatch(NAME)
    expect(after).toHaveLength(4)
    expect(after[0]).toBe(before[0])
    expect(after[1]).toBeUndefined()
    expect(after[2]).toMatch(NAME)
    expect(after[2]).not.toBe(before[0])
    expect(after[3]).toBe(after[2])
  })

  it('inside a transaction a stale plan fails that transaction, and the next one reads the new values', async () => {
    const text = 'select id, day from shapes where id = $1'
    await onEveryConnection(async (tem) => connection.rows(text, [1], tem.getTransactionContext()))
    await h.db.query('alter table shapes alter column day type text')
    const failed = await inTransaction(app.orm.em.fork(), async (tem) => connection.rows(text, [1], tem.getTransactionContext())).catch((err: unknown) => err)
    expect(isStalePlan(failed), String(failed)).toBe(true)
    const again = await inTransaction(app.orm.em.fork(), async (tem) => connection.rows(text, [1], tem.getTransactionContext()))
    expect(again).toEqual([{ id: 1, day: '2026-01-02' }])
  })
})
