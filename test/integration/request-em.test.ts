/**
 * Which requests fork an EntityManager of their own (plugins/orm.ts forks
 * on first use): reads and a create that is one statement use the app's,
 * a create that runs a transaction (a uniqueness check) forks one. The
 * records are written either way, with their first history entry.
 * `equipamiento` has no encrypted field, so no read is logged (a logged
 * read is a write, on the request's own EntityManager). Only forks made
 * while the test's requests run are counted: the instance's timers (the
 * revocation epoch's check, plugins/auth.ts) fork their own meanwhile.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { client, login, ok } from '../helpers/http.js'

let h: Harness
let app: FastifyInstance
let admin: ReturnType<typeof client>
let forks = 0
/** Set inside forksDuring: a timer's callback runs outside it. */
const during = new AsyncLocalStorage<true>()

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  admin = client(app, await login(app))
  // The first request of a session reads its user from the database (a cache miss, on the request's own).
  ok(await admin.get('/equipamiento?limit=1'))
  const em = app.orm.em
  const fork = em.fork.bind(em)
  em.fork = ((...args: Parameters<typeof fork>) => { if (during.getStore() === true) forks++; return fork(...args) }) as typeof em.fork
}, 120_000)
afterAll(async () => { await h.close() })

async function forksDuring (run: () => Promise<unknown>): Promise<number> {
  const before = forks
  await during.run(true, run)
  return forks - before
}

const historyOf = async (id: string): Promise<string[]> =>
  (await h.db.query<{ accion: string }>('select accion from sys_historial where registro = $1 order by version', [id])).map((r) => r.accion)

describe('the EntityManager a request uses', () => {
  it('a create that is one statement forks none, and writes the record and its history entry', async () => {
    let id = ''
    expect(await forksDuring(async () => {
      id = (ok(await admin.post('/equipamiento', { tipo: 'radio', nombre: 'Emisora 1', ubicacion: 'Armero' }), 201) as { _id: string })._id
    })).toBe(0)
    const [row] = await h.db.query<{ ubicacion: string }>('select ubicacion from equipamiento where _id = $1', [id])
    expect(row?.ubicacion).toBe('Armero')
    expect(await historyOf(id)).toEqual(['crear'])
  })

  it('reads fork none: a record by id and a list page with its total', async () => {
    const id = (ok(await admin.post('/equipamiento', { tipo: 'chaleco', nombre: 'Chaleco 7' }), 201) as { _id: string })._id
    expect(await forksDuring(async () => {
      expect(ok(await admin.get(`/equipamiento/${id}`)).nombre).toBe('Chaleco 7')
      expect(ok(await admin.get('/equipamiento?tipo=chaleco&limit=5')).total).toBe(1)
    })).toBe(0)
  })

  it('a create with a uniqueness check runs a transaction on a forked EntityManager', async () => {
    let id = ''
    expect(await forksDuring(async () => {
      id = (ok(await admin.post('/equipamiento', { tipo: 'arma', nombre: 'Pistola 3', numero_serie: 'SN-0003' }), 201) as { _id: string })._id
    })).toBe(1)
    expect(await historyOf(id)).toEqual(['crear'])
    // The check itself: the same serial number again is refused, and nothing is written.
    const again = await admin.post('/equipamiento', { tipo: 'arma', nombre: 'Pistola 4', numero_serie: 'SN-0003' })
    expect(again.status).toBe(409)
    const [n] = await h.db.query<{ n: number }>("select count(*)::int as n from equipamiento where numero_serie = 'SN-0003'")
    expect(n?.n).toBe(1)
  })
})
