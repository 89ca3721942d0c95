/**
 * Creates and reads by id of a turn wait while the pool's every connection
 * runs a statement of theirs, and go together when one ends
 * (core/coalesce.ts `inFlight`, db/insert-batch.ts, db/row-batch.ts). On an
 * embedded database, in either run: its pool holds one connection, and the
 * test's own client holding a transaction makes PGlite serve only that
 * client meanwhile (docs/decisions.md "Embedded: one connection").
 * - the creates of three later turns go as one statement after the first
 *   turn's, each answered 201 and sealed;
 * - reads by id of later turns go as one statement, and each sees the
 *   records created before it was asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login, type Res } from '../helpers/http.js'
import { queriesOf } from '../helpers/sql-capture.js'

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

const nextTurn = async (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Runs `start(i)` for 0…n-1, each in a turn of its own, while the test's client holds the database in a transaction. */
async function whileHeld<T> (n: number, start: (i: number) => Promise<T>): Promise<T[]> {
  await h.db.query('begin')
  await h.db.query('select 1')
  const started: Array<Promise<T>> = []
  for (let i = 0; i < n; i++) {
    started.push(start(i))
    for (let t = 0; t < 5; t++) await nextTurn()
  }
  await h.db.query('commit')
  return Promise.all(started)
}

describe('with every connection running a statement of theirs', () => {
  it('the creates of later turns wait and go together in one statement', async () => {
    const answers = await whileHeld(4, async (i) => call(app, 'POST', '/sala092', { token, body: { ...CALL, descripcion: `turno ${i}` } }))
    for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(201)
    const ids = answers.map((res: Res) => res.body.data._id as string)
    const rows = await h.db.query<{ registro: string, xid: string }>(`select registro, xid::text as xid from sys_historial where modulo = 'sala092' and registro = any($1)`, [ids])
    const xid = new Map(rows.map((r) => [r.registro, r.xid]))
    expect(ids.map((id) => xid.get(id))).toEqual([xid.get(ids[0]!), xid.get(ids[1]!), xid.get(ids[1]!), xid.get(ids[1]!)])
    expect(xid.get(ids[0]!)).not.toBe(xid.get(ids[1]!))
    for (const id of ids) expect((await call(app, 'GET', `/sala092/${id}/verificar`, { token })).body.data.valido).toBe(true)
  })

  it('the reads by id of later turns wait and go together in one statement, each seeing what was created before it', async () => {
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await call(app, 'POST', '/sala092', { token, body: { ...CALL, descripcion: `leída ${i}` } })).body.data._id as string)
    let answers: Res[] = []
    const sent = await queriesOf(app.orm.em, async () => {
      answers = await whileHeld(4, async (i) => call(app, 'GET', `/sala092/${ids[i]!}`, { token }))
    })
    expect(answers.map((res) => [res.status, res.body.data?.descripcion])).toEqual(ids.map((_, i) => [200, `leída ${i}`]))
    expect(sent.filter((q) => q.sql.includes('from "sala092"')).map((q) => q.bindings.filter((b) => ids.includes(b as string)).length)).toEqual([1, 3])
  })
})
