/**
 * Start-up before PostgreSQL and Redis are reachable (docs/operator-guide.md "Start-up waits for PostgreSQL and Redis"): the
 * server (a child process, `node --import tsx bin/server.ts`) listens at
 * once, `/health` answers 200 and `/ready` 503 while it waits, logging what
 * it waits for and when it tries again; when this test starts its own
 * PostgreSQL cluster and its own redis-server on the awaited ports, the
 * service becomes ready by itself. With STARTUP_WAIT it gives up, exit 1.
 * Never the shared services: a cluster and a redis-server of this file.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, TEST_KEY } from '../helpers/app.js'
import { errorOf } from '../helpers/errors.js'
import { freePort } from '../helpers/free-port.js'
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js'

const dirs: string[] = []
const children: ChildProcess[] = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

interface Server { child: ChildProcess, url: string, log: () => string, exited: Promise<number | null> }

function startServer (env: Record<string, string>): Promise<Server> {
  return freePort().then((port) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'policia-startup-'))
    dirs.push(dataDir)
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0', DATA_DIR: dataDir,
        JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789', ENCRYPTION_KEY: TEST_KEY,
        ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password, LOG_LEVEL: 'info', TZ: 'Europe/Madrid', ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let out = ''
    child.stdout!.on('data', (d: Buffer) => { out += String(d) })
    child.stderr!.on('data', (d: Buffer) => { out += String(d) })
    const exited = new Promise<number | null>((resolve) => { child.once('exit', (code) => { resolve(code) }) })
    return { child, url: `http://127.0.0.1:${port}`, log: () => out, exited }
  })
}

async function until<T> (what: string, fn: () => Promise<T | undefined>, log: () => string, ms = 90_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`${what} did not happen; server output:\n${log()}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const status = async (url: string): Promise<{ status: number, body: unknown }> => {
  const res = await fetch(url)
  return { status: res.status, body: await res.json() }
}

describe('start-up while PostgreSQL and Redis are not reachable yet', () => {
  let pg: PgCluster
  let redis: RedisServer
  beforeAll(async () => {
    // Made, then stopped: their ports are known and nothing listens there.
    pg = await startPgCluster()
    await pg.stop()
    redis = await startRedisServer(['--save', '', '--appendonly', 'no'])
    await redis.shutdown()
  })
  afterAll(async () => {
    await pg?.destroy()
    await redis?.destroy()
  })

  it('while it waits the port is open (/health 200, /ready and the API 503), logs each wait, and becomes ready when both come up', { timeout: 240_000 }, async () => {
    const s = await startServer({ DATABASE_URL: pg.url(), REDIS_URL: redis.url })
    const health = await until('/health answering', async () => { const r = await status(`${s.url}/health`); return r.status === 200 ? r : undefined }, s.log)
    expect(health.body).toEqual({ success: true, data: { status: 'ok' } })
    expect(await status(`${s.url}/ready`)).toEqual({ status: 503, body: errorOf('SERVICIO_NO_DISPONIBLE') })
    expect(await status(`${s.url}/sala092`)).toEqual({ status: 503, body: errorOf('SERVICIO_NO_DISPONIBLE') })
    // Redis is awaited first (the stores come before the database), then PostgreSQL.
    await until('a logged wait for Redis', async () => /waiting for Redis at redis:\/\/127\.0\.0\.1:\d+\/? \(.*\); next attempt in \d+ s/.test(s.log()) || undefined, s.log)
    await until('a second attempt (back-off)', async () => /"waitingFor":"Redis[^}]*"attempt":2/.test(s.log()) || undefined, s.log)
    await redis.start()
    await until('a logged wait for PostgreSQL', async () => /waiting for PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(.*ECONNREFUSED.*\); next attempt in \d+ s/.test(s.log()) || undefined, s.log)
    expect((await status(`${s.url}/ready`)).status).toBe(503)
    expect((await status(`${s.url}/health`)).status).toBe(200)

    await pg.start()
    const ready = await until('/ready 200', async () => { const r = await status(`${s.url}/ready`); return r.status === 200 ? r : undefined }, s.log)
    expect(ready.body).toEqual({ success: true, data: { status: 'ready', database: 'ok', redis: 'ok' } })
    const login = await fetch(`${s.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
    expect(login.status).toBe(200)
    expect(s.child.exitCode).toBeNull() // never exited while waiting

    s.child.kill('SIGTERM')
    expect(await s.exited, s.log()).toBe(0)
  })

  it('with STARTUP_WAIT gives up after it, exit status 1 and the fix in the message', async () => {
    const nowhere = await freePort()
    const s = await startServer({ DATABASE_URL: `postgres://postgres@127.0.0.1:${nowhere}/postgres`, STARTUP_WAIT: '3s' })
    expect(await s.exited, s.log()).toBe(1)
    expect(s.log()).toMatch(new RegExp(`PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:${nowhere}/postgres was still unreachable after \\d+ s \\(STARTUP_WAIT\\): .*; check DATABASE_URL .* or raise STARTUP_WAIT \\(0 waits for ever\\)`))
  })
})
