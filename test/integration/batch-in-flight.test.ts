/**
 * Creates and reads by id of a turn wait while the pool's every connection
 * runs a statement of theirs, and go together when one ends
 * (core/coalesce.ts `inFlight`, db/insert-batch.ts, db/row-batch.ts). On an
 * embedded database, in either run: its pool holds one connection, and the
 * test's own client holding a transaction makes PGlite serve only that
 * client meanwhile (docs/decisions.md "Embedded: one connection").
 * - the creates of three later turns go as one statement after the first
 *   create's, each answered 201 and sealed;
 * - reads by id of later turns go as one statement, and each sees the
 *   records created before it was asked.
 * On PostgreSQL (its pool holds ten connections) a module's creates run one
 * statement at a time too (docs/performance.md "One create statement at a
 * time"): while the first waits on a lock the test's client holds, the
 * creates of three later turns wait in the service, not on the database,
 * and go as one statement once it ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login, type Res } from '../helpers/http.js'
import { queriesOf } from '../helpers/sql-capture.js'
import { usingPostgres } from '../helpers/services.js'
import { startTestApp } from '../helpers/test-app.js'

const CALL = { tipo_incidencia: 'normal', numero_llamada: '600000000' }

let h: Harness
let app: FastifyInstance
let token: string

beforeAll(async () => {
  h = await createHarness({ embedded: true })
  app = await h.app()
  token = await login(app)
  expect((await call(app, 'POST', '/sala092', { token, body: { ...CALL, descripcion: 'primera' } })).status).toBe(201)
}, 120_000)
afterAll(async () => { await h.close() })

const pause = async (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** An instance, its harness, and the statement the test's client holds the database with, in a transaction. */
interface Held { h: Harness, app: FastifyInstance, hold: string }

/**
 * While the test's client holds the database in a transaction (`on.hold`,
 * run in it): `start(0)`,
 * until its statement (one that `mine` matches) is sent; then `start(i)`
 * for 1…n-1, each a moment after the last, which reach the point where
 * they wait (an id drawn from Redis takes a round trip). Answers the
 * answers and the statements `mine` matches sent meanwhile, and after.
 */
async function whileHeld<T> (on: Held, n: number, mine: RegExp, start: (i: number) => Promise<T>): Promise<{ answers: T[], held: number, sent: number }> {
  const knex = on.app.orm.em.getConnection().getKnex()
  let sent = 0
  const onQuery = (q: { sql: string }): void => { if (mine.test(q.sql)) sent++ }
  knex.on('query', onQuery)
  try {
    await on.h.db.query('begin')
    await on.h.db.query(on.hold)
    const started = [start(0)]
    for (let waited = 0; sent === 0 && waited < 10_000; waited += 10) await pause(10)
    expect(sent, 'the first statement was sent while held').toBe(1)
    for (let i = 1; i < n; i++) {
      started.push(start(i))
      await pause(20)
    }
    await pause(300)
    const held = sent
    await on.h.db.query('commit')
    return { answers: await Promise.all(started), held, sent }
  } finally {
    knex.off('query', onQuery)
  }
}

/** Four creates while the first one's statement is held: the other three go together after it, each answered 201 and sealed. */
async function createsWhileHeld (on: Held, auth: string): Promise<void> {
  const { answers, held, sent } = await whileHeld(on, 4, /insert into "sala092"/, async (i) => call(on.app, 'POST', '/sala092', { token: auth, body: { ...CALL, descripcion: `turno ${i}` } }))
  for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(201)
  expect({ held, sent }).toEqual({ held: 1, sent: 2 })
  const ids = answers.map((res: Res) => res.body.data._id as string)
  const rows = await on.h.db.query<{ registro: string, xid: string }>(`select registro, xid::text as xid from sys_historial where modulo = 'sala092' and registro = any($1)`, [ids])
  const xid = new Map(rows.map((r) => [r.registro, r.xid]))
  expect(ids.map((id) => xid.get(id))).toEqual([xid.get(ids[0]!), xid.get(ids[1]!), xid.get(ids[1]!), xid.get(ids[1]!)])
  expect(xid.get(ids[0]!)).not.toBe(xid.get(ids[1]!))
  for (const id of ids) expect((await call(on.app, 'GET', `/sala092/${id}/verificar`, { token: auth })).body.data.valido).toBe(true)
}

describe('with every connection running a statement of theirs', () => {
  it('the creates of later turns wait and go together in one statement', async () => {
    await createsWhileHeld({ h, app, hold: 'select 1' }, token)
  })

  it('the reads by id of later turns wait and go together in one statement, each seeing what was created before it', async () => {
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await call(app, 'POST', '/sala092', { token, body: { ...CALL, descripcion: `leída ${i}` } })).body.data._id as string)
    // A read by one id before: its statement is prepared (db/session-statements.ts), so the first read while held is sent at once.
    expect((await call(app, 'GET', `/sala092/${ids[0]!}`, { token })).status).toBe(200)
    let answers: Res[] = []
    const sent = await queriesOf(app.orm.em, async () => {
      ({ answers } = await whileHeld({ h, app, hold: 'select 1' }, 4, /from "sala092"/, async (i) => call(app, 'GET', `/sala092/${ids[i]!}`, { token })))
    })
    expect(answers.map((res) => [res.status, res.body.data?.descripcion])).toEqual(ids.map((_, i) => [200, `leída ${i}`]))
    expect(sent.filter((q) => q.sql.includes('from "sala092"')).map((q) => q.bindings.filter((b) => ids.includes(b as string)).length)).toEqual([1, 3])
  })
})

describe.runIf(usingPostgres)('on PostgreSQL, with a create statement waiting on a lock', () => {
  let pgH: Harness
  let pgApp: FastifyInstance
  let pgToken: string
  beforeAll(async () => {
    ({ h: pgH, app: pgApp, token: pgToken } = await startTestApp())
    expect((await call(pgApp, 'POST', '/sala092', { token: pgToken, body: { ...CALL, descripcion: 'primera' } })).status).toBe(201)
  }, 120_000)
  afterAll(async () => { await pgH?.close() })

  it('the creates of later turns wait in the service, not on free connections, and go together in one statement', async () => {
    // SHARE mode conflicts with the ROW EXCLUSIVE lock an insert takes: the first create's statement waits on it.
    await createsWhileHeld({ h: pgH, app: pgApp, hold: 'lock table sala092 in share mode' }, pgToken)
  })
})
