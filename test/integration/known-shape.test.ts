/**
 * db/known-shape-query.ts against the database (PostgreSQL, or PGlite's
 * socket server when DATABASE_URL is unset): a named statement is
 * described on its first execution on a connection only, and every
 * execution returns what node-postgres's own query returns: the same rows,
 * values parsed by the same parsers, the same row count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { queryKnownShape, type Shapes } from '../../db/known-shape-query.js'
import { isStalePlan } from '../../core/postgres-errors.js'
import { createTestDatabase, type TestDatabase } from '../helpers/services.js'

let db: TestDatabase
let client: pg.Client
/** Describe messages the client sent, and Bind messages. */
const sent = { describe: 0, bind: 0 }

beforeAll(async () => {
  db = await createTestDatabase()
  client = db.url !== undefined
    ? new pg.Client({ connectionString: db.url })
    : new pg.Client({ host: db.embedded!.host, port: db.embedded!.port, database: db.embedded!.dbName, user: 'postgres', password: 'postgres' })
  await client.connect()
  const connection = (client as unknown as { connection: Record<'describe' | 'bind', (...args: unknown[]) => void> }).connection
  for (const message of ['describe', 'bind'] as const) {
    const original = connection[message].bind(connection)
    connection[message] = (...args: unknown[]) => { sent[message]++; original(...args) }
  }
  await client.query(`create table shapes (id int primary key, name text, at timestamptz, doc jsonb, n bigint)`)
  await client.query(`insert into shapes values (1, 'uno', '2026-01-02 03:04:05+00', '{"a":[1,2]}', 9007199254740993), (2, null, null, null, null)`)
}, 60_000)
afterAll(async () => {
  await client?.end()
  await db?.drop()
})

const SELECT = 'select id, name, at, doc, n from shapes where id = $1'
const count = async <T>(run: () => Promise<T>): Promise<{ result: T, describe: number, bind: number }> => {
  const before = { ...sent }
  const result = await run()
  return { result, describe: sent.describe - before.describe, bind: sent.bind - before.bind }
}

describe('a named statement run with its kept shape', () => {
  it('is described on its first execution only, and returns what node-postgres returns, for every row and null', async () => {
    const shapes: Shapes = new Map()
    const name = 'known_shape_1'
    for (const [i, id] of [1, 2, 1, 2, 3].entries()) {
      const expected = await client.query({ text: SELECT, values: [id] })
      const runs = await count(async () => queryKnownShape(client, { name, text: SELECT, values: [id] }, shapes))
      expect(runs.result.rows).toEqual(expected.rows)
      expect(runs.result.rowCount).toBe(expected.rowCount)
      expect(runs.bind).toBe(1)
      expect(runs.describe, `execution ${i}`).toBe(i === 0 ? 1 : 0)
    }
    expect(shapes.has(name)).toBe(true)
    const again = await count(async () => queryKnownShape(client, { name, text: SELECT, values: [1] }, shapes))
    expect(again.describe).toBe(0)
    expect(again.result.rows[0]).toEqual({ id: 1, name: 'uno', at: new Date('2026-01-02T03:04:05Z'), doc: { a: [1, 2] }, n: '9007199254740993' })
  })

  it('keeps the shape of a result without rows, and reads rows with it after', async () => {
    const shapes: Shapes = new Map()
    const none = await count(async () => queryKnownShape(client, { name: 'known_shape_2', text: SELECT, values: [99] }, shapes))
    const some = await count(async () => queryKnownShape(client, { name: 'known_shape_2', text: SELECT, values: [2] }, shapes))
    expect([none.describe, some.describe]).toEqual([1, 0])
    expect(none.result.rows).toEqual([])
    expect(some.result.rows).toEqual([{ id: 2, name: null, at: null, doc: null, n: null }])
  })

  it('describes again when the same name is read with other parsers', async () => {
    const shapes: Shapes = new Map()
    const asText: pg.CustomTypesConfig = { getTypeParser: () => (value: string) => `text:${value}` }
    const typed = await queryKnownShape(client, { name: 'known_shape_3', text: SELECT, values: [1] }, shapes)
    const texts = await count(async () => queryKnownShape(client, { name: 'known_shape_3', text: SELECT, values: [1], types: asText }, shapes))
    expect(typed.rows[0]!.id).toBe(1)
    expect(texts.describe).toBe(1)
    expect(texts.result.rows[0]).toEqual({ id: 'text:1', name: 'text:uno', at: 'text:2026-01-02 03:04:05+00', doc: 'text:{"a": [1, 2]}', n: 'text:9007199254740993' })
  })

  it('a statement whose result changed type under it fails as PostgreSQL says (a stale plan), never with rows read by the old shape', async () => {
    const shapes: Shapes = new Map()
    const text = 'select id, name from shapes where id = $1'
    await queryKnownShape(client, { name: 'known_shape_4', text, values: [1] }, shapes)
    await queryKnownShape(client, { name: 'known_shape_4', text, values: [1] }, shapes)
    await client.query('alter table shapes alter column name type varchar(20)')
    const err = await queryKnownShape(client, { name: 'known_shape_4', text, values: [1] }, shapes).catch((e: unknown) => e)
    expect(isStalePlan(err), String(err)).toBe(true)
    // The connection is still usable; a new name reads the new shape.
    const fresh = await queryKnownShape(client, { name: 'known_shape_5', text, values: [1] }, shapes)
    expect(fresh.rows).toEqual([{ id: 1, name: 'uno' }])
  })

  it('a value node-postgres cannot send rejects that query alone, and the connection goes on', async () => {
    const shapes: Shapes = new Map()
    await queryKnownShape(client, { name: 'known_shape_6', text: SELECT, values: [1] }, shapes)
    const unsendable = { toPostgres: () => { throw new Error('no wire form') } }
    await expect(queryKnownShape(client, { name: 'known_shape_6', text: SELECT, values: [unsendable] }, shapes)).rejects.toThrow('no wire form')
    const after = await count(async () => queryKnownShape(client, { name: 'known_shape_6', text: SELECT, values: [2] }, shapes))
    expect(after.describe).toBe(0)
    expect(after.result.rows).toEqual([{ id: 2, name: null, at: null, doc: null, n: null }])
  })
})
