/**
 * The embedded database's named statements, prepared and run in SQL
 * (db/session-statements.ts), on an embedded database in either run:
 * - a value reaches PostgreSQL as a bound parameter would: strings with
 *   quotes, backslashes and any character, numbers, booleans, nulls, dates;
 * - many queries of one text at once on a new instance, some of them in
 *   transactions, all answer, and the text is prepared once;
 * - a statement prepared in a transaction that rolled back is not prepared
 *   again; one PostgreSQL cannot prepare (an untyped parameter, an EXPLAIN)
 *   is answered all the same;
 * - two instances on one embedded database each prepare their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { queriesOf } from '../helpers/sql-capture.js'
import type { ServiceConnection } from '../../db/driver.js'
import { inTransaction } from '../../db/transaction.js'

let h: Harness
let app: FastifyInstance
let connection: ServiceConnection

beforeAll(async () => {
  h = await createHarness({ embedded: true })
  app = await h.app()
  connection = app.orm.em.getConnection() as ServiceConnection
  await h.db.query('create table probe (id int primary key, s text, n numeric, b boolean, at timestamptz)')
}, 120_000)
afterAll(async () => { await h.close() })

/** The session's prepared statements whose text contains `fragment`. */
const preparedOf = async (fragment: string): Promise<string[]> =>
  (await h.db.query<{ name: string }>('select name from pg_prepared_statements where statement like $1 order by name', [`%${fragment}%`])).map((r) => r.name)

/** The statement names `run` sent its queries on `table` under (undefined: inlined). */
const namesOf = async (table: string, run: () => Promise<unknown>): Promise<Array<string | undefined>> =>
  (await queriesOf(app.orm.em, run)).filter((q) => q.sql.includes(table)).map((q) => q.name)

describe('embedded named statements', () => {
  it('a value reaches PostgreSQL as a bound parameter would', async () => {
    const text = fc.string({ unit: fc.constantFrom("'", '\\', 'a', 'ñ', '"', ' ', '?', '$1', '😀', '\n'), maxLength: 30 })
    const value = fc.record({
      s: fc.oneof(text, fc.string({ unit: 'grapheme' }).map((s) => s.replaceAll('\u0000', '')), fc.constant(null)),
      n: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)),
      b: fc.oneof(fc.boolean(), fc.constant(null)),
      // The years an instant may fall in (core/time.ts MIN_YEAR, MAX_YEAR).
      at: fc.oneof(fc.date({ noInvalidDate: true, min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z') }), fc.constant(null)),
    })
    let id = 0
    await fc.assert(fc.asyncProperty(value, async (v) => {
      id++
      await connection.rows('insert into probe (id, s, n, b, at) values ($1, $2, $3, $4, $5)', [id, v.s, v.n, v.b, v.at])
      const [mine] = await connection.rows('select s, n::text as n, b, at from probe where id = $1', [id])
      const [bound] = await h.db.query('select $1::text as s, $2::numeric::text as n, $3::boolean as b, $4::timestamptz as at', [v.s, v.n, v.b, v.at?.toISOString() ?? null])
      expect(mine).toEqual(bound)
    }), { numRuns: 300 })
    expect(await preparedOf('insert into probe')).toHaveLength(1)
  })

  it('many queries of one text at once on a new instance all answer, some in transactions, and the text is prepared once', async () => {
    const fresh = await h.app()
    const conn = fresh.orm.em.getConnection() as ServiceConnection
    const text = 'select id from probe where id = $1 and true'
    const reads = await Promise.all(Array.from({ length: 24 }, async (_, i) => i % 3 === 0
      ? inTransaction(fresh.orm.em.fork(), async (tem) => conn.rows(text, [i + 1], tem.getTransactionContext()))
      : conn.rows(text, [i + 1])))
    expect(reads).toEqual(Array.from({ length: 24 }, (_, i) => [{ id: i + 1 }]))
    expect(await preparedOf(text)).toHaveLength(1)
    await h.closeApp(fresh)
  })

  it('in a transaction, a text whose PREPARE waits for the connection the transaction holds runs with its values written in', async () => {
    const text = 'select id from probe where id = $1 and 3 = 3'
    let outside: Promise<unknown> | undefined
    const sent = await queriesOf(app.orm.em, async () => {
      const inside = await inTransaction(app.orm.em.fork(), async (tem) => {
        await connection.rows('select 1 as one', [], tem.getTransactionContext()) // the transaction holds the pool's one connection
        outside = connection.rows(text, [1]) // whose PREPARE waits for it
        await new Promise((resolve) => setTimeout(resolve, 20))
        return connection.rows(text, [2], tem.getTransactionContext())
      })
      expect(inside).toEqual([{ id: 2 }])
      expect(await outside).toEqual([{ id: 1 }])
    })
    expect(sent.filter((q) => q.sql.includes('3 = 3')).map((q) => q.name === undefined)).toEqual([true, false])
  })

  it('a statement prepared in a transaction that rolled back is used again; one PostgreSQL cannot prepare is answered all the same', async () => {
    const text = 'select s from probe where id = $1 and 1 = 1'
    await inTransaction(app.orm.em.fork(), async (tem) => {
      await connection.rows(text, [1], tem.getTransactionContext())
      throw new Error('rolled back')
    }).catch(() => undefined)
    const names = await namesOf('probe', async () => connection.rows(text, [1]))
    expect(names).toHaveLength(1)
    expect(await preparedOf(text)).toEqual([names[0]])
    // `$1 is null` leaves the parameter without a type: PREPARE fails, and the query runs with its value written in.
    const untyped = 'select count(*)::int as n from probe where $1 is null or id = 1'
    expect(await connection.rows(untyped, ['x'])).toEqual([{ n: 1 }])
    expect(await namesOf('probe', async () => connection.rows(untyped, ['x']))).toEqual([undefined])
    expect(await preparedOf(untyped)).toEqual([])
    // PREPARE takes no EXPLAIN (where the protocol's Parse does): it runs with its value written in.
    const explain = 'explain select s from probe where id = $1'
    expect((await connection.rows(explain, [1])).length).toBeGreaterThan(0)
    expect(await namesOf('probe', async () => connection.rows(explain, [1]))).toEqual([undefined])
  })

  it('two instances on one embedded database each prepare their own', async () => {
    const other = await h.app()
    const text = 'select id from probe where id = $1 and 2 = 2'
    const one = await namesOf('probe', async () => connection.rows(text, [1]))
    const two = await queriesOf(other.orm.em, async () => (other.orm.em.getConnection() as ServiceConnection).rows(text, [1]))
    expect(one[0]).toMatch(/^e[0-9a-f]{8}_s\d+_[0-9a-f]{24}$/)
    expect(two.map((q) => q.name)).toEqual([expect.stringMatching(/^e[0-9a-f]{8}_s\d+_[0-9a-f]{24}$/)])
    expect(two[0]!.name).not.toBe(one[0])
    expect(await preparedOf(text)).toEqual([one[0], two[0]!.name].sort())
    await h.closeApp(other)
  })
})
