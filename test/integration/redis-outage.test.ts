/**
 * Redis going away and coming back, for real: this file starts its own
 * redis-server on a free port (no persistence), stops it mid-run and starts
 * it again. While it is down, requests answer 503 `Servicio no disponible`
 * (never hang, never 500) and /ready says so; when it is back, the service
 * recovers by itself, and a token revoked before the outage stays revoked
 * (the database answers the store's loss). Needs the redis-server binary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { client, login } from '../helpers/http.js'
import { errorOf, expectError } from '../helpers/errors.js'
import { freePort } from '../helpers/free-port.js'

async function startRedis (port: number): Promise<ChildProcess> {
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('redis-server did not start')) }, 10_000)
    proc.stdout!.on('data', (d: Buffer) => { if (/Ready to accept connections/.test(String(d))) { clearTimeout(timer); resolve() } })
  })
  return proc
}

async function stop (proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  proc.kill('SIGKILL')
  await exited
}

describe('a Redis outage', () => {
  let h: Harness
  let app: FastifyInstance
  let redis: ChildProcess
  let port: number

  beforeAll(async () => {
    port = await freePort()
    redis = await startRedis(port)
    h = await createHarness()
    app = await h.app({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } })
  })
  afterAll(async () => {
    await stop(redis)
    await h.close()
  })

  it('answers 503 while Redis is down, recovers when it is back, and revocations survive', async () => {
    expect(app.stores.kind).toBe('redis')
    const live = await login(app)
    const revoked = await login(app)
    const api = client(app, live)
    expect((await client(app, revoked).post('/auth/logout')).status).toBe(200)
    expect((await api.get('/me')).status).toBe(200)

    await stop(redis)
    const started = Date.now()
    const refused = await api.get('/me')
    expectError(refused, 'SERVICIO_NO_DISPONIBLE')
    expect(refused.headers['retry-after']).toBe('5')
    expectError(await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'x' }), 'SERVICIO_NO_DISPONIBLE')
    expectError(await client(app).post('/auth/login', { username: 'admin', password: 'whatever-123' }), 'SERVICIO_NO_DISPONIBLE')
    const ready = await app.inject({ method: 'GET', url: '/ready' })
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toEqual(errorOf('SERVICIO_NO_DISPONIBLE'))
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200)
    expect(Date.now() - started).toBeLessThan(15_000) // fails fast, no hanging requests

    redis = await startRedis(port) // a new, empty Redis: every key is gone
    let status = 0
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      status = (await app.inject({ method: 'GET', url: '/ready' })).statusCode
    }
    expect(status).toBe(200)
    expect((await api.get('/me')).status).toBe(200)
    expectError(await client(app, revoked).get('/me'), 'TOKEN_INVALIDO')
    const created = await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'tras el corte' })
    expect(created.status).toBe(201)
    expect(created.body.data._id).toMatch(/-00001$/) // counters re-seeded from the table
  }, 60_000)

  it('shuts down cleanly while Redis is unreachable', async () => {
    await stop(redis)
    await expect(h.closeApp(app)).resolves.toBeUndefined()
  })
})
