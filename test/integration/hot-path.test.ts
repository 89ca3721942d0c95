/**
 * The hot path's budget (GET by id: one database round trip; with Redis,
 * none to Redis for a token seen a moment ago), counted — not timed — on a warm token:
 * queries seen by the database driver and commands sent to Redis.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { client, login, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { usingRedis } from '../helpers/services.js'
import { POLL_SQL } from '../../db/revocation-epoch.js'
import { WRITE_SIGNAL_MS } from '../../records/events/feed-hub.js'
import { ADD_MANY } from '../../stores/rate-limits/redis.js'
import { RENEW } from '../../stores/sequences/redis.js'

const ADD_MANY_SHA = createHash('sha1').update(ADD_MANY).digest('hex')
const RENEW_SHA = createHash('sha1').update(RENEW).digest('hex')

let h: Harness
let app: FastifyInstance

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
})
afterAll(async () => { await h.close() })

interface Cost { status: number, queries: string[], commands: string[], writes: number }

/** One GET, with the SQL statements and Redis commands (and socket writes) it caused. */
async function measure (api: Api, url: string): Promise<Cost> {
  // A write before this GET tells the other instances within WRITE_SIGNAL_MS (one PUBLISH);
  // a timer set later for as long fires after it, so that signal is not counted as this GET's.
  await new Promise(resolve => setTimeout(resolve, WRITE_SIGNAL_MS + 1))
  const queries: string[] = []
  const knex = app.orm.em.getConnection().getKnex()
  // The periodic revocation-epoch check (every 2 s, not part of any request) may land meanwhile.
  const onQuery = (q: { sql: string }): void => { if (q.sql !== POLL_SQL) queries.push(q.sql) }
  knex.on('query', onQuery)
  // Redis: count the commands and the writes to the socket (one write = one round trip).
  const commands: string[] = []
  let writes = 0
  // A write's change signal (PUBLISH, sent WRITE_SIGNAL_MS after an earlier create) may land late on a loaded machine: not this request's cost.
  let signal = false
  const redis = usingRedis ? app.redis : undefined
  const stream = redis === undefined ? undefined : (redis as unknown as { stream: { write: (...a: unknown[]) => boolean } }).stream
  const originalWrite = stream?.write
  const originalSend = redis?.sendCommand
  if (redis !== undefined && stream !== undefined && originalWrite !== undefined && originalSend !== undefined) {
    stream.write = (...a: unknown[]) => { if (!signal) writes++; return originalWrite.apply(stream, a) }
    redis.sendCommand = ((...args: unknown[]) => {
      const command = args[0] as { name: string, args: unknown[] }
      const name = command.name
      // Timers' scripts, not the request's: hits admitted ahead of Redis are added every few milliseconds
      // (stores/admission.ts), and an id counter drawn in the last second (a user or record created just
      // before) is written back and its lease renewed every 50 ms (stores/sequences/leases.ts).
      const timers = name === 'evalsha' && (command.args[0] === ADD_MANY_SHA || command.args[0] === RENEW_SHA)
      if (name !== 'publish' && !timers) commands.push(name)
      signal = name === 'publish' || timers
      try { return (originalSend as (...a: unknown[]) => unknown).apply(redis, args) } finally { signal = false }
    }) as typeof redis.sendCommand
  }
  try {
    const res = await api.get(url)
    expect(res.headers['ratelimit-remaining']).toBeDefined()
    return { status: res.status, queries, commands, writes }
  } finally {
    knex.off('query', onQuery)
    if (redis !== undefined && stream !== undefined) {
      stream.write = originalWrite!
      redis.sendCommand = originalSend!
    }
  }
}

function expectBudget (cost: Cost, table: string): void {
  expect(cost.status).toBe(200)
  expect(cost.queries).toHaveLength(1)
  expect(cost.queries[0]).toMatch(new RegExp(`^select .* from "${table}"`))
  if (usingRedis) {
    // A warm token is admitted ahead of Redis (stores/admission.ts): its
    // hit is added later, with the others of a few milliseconds.
    expect(cost.commands).toEqual([])
    expect(cost.writes).toBe(0)
  }
}

describe('GET /{module}/{id}', () => {
  it('costs one database query and, on a warm token, no Redis round trip', async () => {
    const api = client(app, await login(app))
    const id = (await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Ruido' })).body.data._id as string
    expect((await api.get(`/sala092/${id}`)).status).toBe(200) // warms the session and user cache
    expectBudget(await measure(api, `/sala092/${id}`), 'sala092')
  })

  it('costs the same for a caller limited to own records: the scope is part of that one query', async () => {
    const admin = client(app, await login(app))
    const agente = await newUser(app, await login(app), 'agente')
    const api = client(app, agente.token)
    const id = (await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Ruido' })).body.data._id as string
    const foreign = (await admin.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Ajena' })).body.data._id as string
    expect((await api.get(`/sala092/${id}`)).status).toBe(200)
    const cost = await measure(api, `/sala092/${id}`)
    expectBudget(cost, 'sala092')
    expect(cost.queries[0]).toMatch(/"_created_by" = /)
    expect((await measure(api, `/sala092/${foreign}`)).status).toBe(404)
  })
})

describe('POST /{module}', () => {
  /** The SQL statements one create sends, and its answer. */
  async function createCost (api: Api, path: string, body: Record<string, unknown>): Promise<{ status: number, id: string, queries: string[] }> {
    const queries: string[] = []
    const knex = app.orm.em.getConnection().getKnex()
    const onQuery = (q: { sql: string }): void => { if (q.sql !== POLL_SQL) queries.push(q.sql) }
    knex.on('query', onQuery)
    try {
      const res = await api.post(path, body)
      return { status: res.status, id: res.body.data?._id as string, queries }
    } finally {
      knex.off('query', onQuery)
    }
  }

  it('with nothing to check, the record and its history entry are one statement (no BEGIN/COMMIT), and the chain verifies', async () => {
    const api = client(app, await login(app))
    await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Primera' }) // the id counter is seeded
    const cost = await createCost(api, '/sala092', { tipo_incidencia: 'urgente', descripcion: 'Ruido', ubicacion: 'Plaza Mayor' })
    expect(cost.status).toBe(201)
    expect(cost.queries, cost.queries.join('\n')).toHaveLength(1)
    expect(cost.queries[0]).toMatch(/^with r as \(insert into "sala092" .*\) insert into "sys_historial"/)
    const history = (await api.get(`/sala092/${cost.id}/historial`)).body.data.versiones
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({ _version: 1, accion: 'crear', campos: expect.arrayContaining(['tipo_incidencia', 'descripcion', 'ubicacion']) })
    expect((await api.get(`/sala092/${cost.id}/verificar`)).body.data).toEqual({ valido: true })
  })

  it('a reference to check runs in one transaction with its check', async () => {
    const api = client(app, await login(app))
    const staff = (await api.post('/personal', { tip: 'TIP-HP', nif: '12345678Z', nombre: 'Ana', apellidos: 'Pérez', escala: 'oficial' })).body.data._id as string
    const cost = await createCost(api, '/denuncias', { denunciante_nombre: 'Juan', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza', descripcion: 'Cartera', agente_asignado: staff })
    expect(cost.status).toBe(201)
    expect(cost.queries[0], cost.queries.join('\n')).toMatch(/^begin/i)
    expect(cost.queries.at(-1)).toMatch(/^commit/i)
    expect(cost.queries.some((q) => /count\(\*\).* from "personal"/.test(q))).toBe(true)
    expect((await api.get(`/denuncias/${cost.id}/verificar`)).body.data).toEqual({ valido: true })
  })
})
