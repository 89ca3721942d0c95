/**
 * The database going away and coming back, for real (docs/operator-guide.md "Faults"): while it
 * is unreachable, shutting down or starting up, reads and writes answer
 * 503 `Servicio no disponible` (never 500), a write cut inside its
 * transaction leaves nothing behind, /ready says not ready, and the service
 * recovers by itself when the database is back.
 *
 * With DATABASE_URL set, this file runs its own PostgreSQL cluster (initdb
 * into a temporary directory, pg_ctl on a free port; needs the PostgreSQL
 * binaries and root) and stops it with `pg_ctl stop -m fast`, or keeps it
 * in standby so that every connection is refused with 57P03. In embedded
 * mode the app talks to a PGlite of this file's own through a socket server
 * the test stops and starts again: the same driver, the same errors of a
 * vanished server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../app.js'
import { openPGlite } from '../../db/embedded.js'
import { loadConfig } from '../../core/config.js'
import { ADMIN, testEnv } from '../helpers/app.js'
import { client, login } from '../helpers/http.js'
import { errorOf, expectError } from '../helpers/errors.js'
import { flushPrefix, newRedisPrefix, usingPostgres } from '../helpers/services.js'
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'

/** A database the test can take away and give back. */
interface Outage {
  readonly kind: 'postgresql' | 'embedded'
  /** Config (DATABASE_URL) or build option (embedded) that points the app at it. */
  readonly env: Record<string, string>
  readonly embedded?: { host: string, port: number, dbName: string, stop (): Promise<void> }
  down (): Promise<void>
  /** Brings it back (nothing when it is up). */
  up (): Promise<void>
  /** SQL straight to the database, bypassing the service (only while it is up). */
  query<T = Record<string, unknown>> (sql: string, params?: unknown[]): Promise<T[]>
  close (): Promise<void>
}

async function postgresOutage (): Promise<Outage & { cluster: PgCluster }> {
  const cluster = await startPgCluster()
  return {
    kind: 'postgresql',
    cluster,
    env: { DATABASE_URL: cluster.url() },
    down: () => cluster.stop('fast'),
    async up () {
      const state = await cluster.state()
      if (state === 'rejecting') await cluster.stop('fast') // left in standby
      if (state !== 'accepting') await cluster.start()
    },
    async query (sql, params) {
      const c = new pg.Client({ connectionString: cluster.url() })
      await c.connect()
      try { return (await c.query(sql, params)).rows } finally { await c.end() }
    },
    close: () => cluster.destroy(),
  }
}

async function embeddedOutage (): Promise<Outage> {
  const db = await openPGlite('memory://')
  const socketDir = mkdtempSync(join(tmpdir(), 'pgl-'))
  const path = join(socketDir, '.s.PGSQL.5432')
  let server: PGLiteSocketServer | undefined
  const start = async (): Promise<void> => {
    server = new PGLiteSocketServer({ db, path, maxConnections: 16 })
    await server.start()
  }
  await start()
  return {
    kind: 'embedded',
    env: {},
    embedded: { host: socketDir, port: 5432, dbName: 'postgres', async stop () { /* closed by close() */ } },
    // Closes the socket server and every connection the app holds (an open
    // transaction of one is rolled back): the database is gone for the app.
    async down () { await server?.stop(); server = undefined },
    async up () { if (server === undefined) await start() },
    async query (sql, params) { return (await db.query(sql, params)).rows as never },
    async close () {
      await server?.stop()
      await db.close()
      rmSync(socketDir, { recursive: true, force: true })
    },
  }
}


describe(`a database outage (${usingPostgres ? 'own PostgreSQL cluster' : 'embedded PGlite'})`, () => {
  let outage: Outage
  let app: FastifyInstance
  let token: string
  const redisPrefix = newRedisPrefix()
  const dataDir = mkdtempSync(join(tmpdir(), 'policia-test-'))
  /** Set to make the next sala092 write lose its database from inside its transaction. */
  let cutInside: 'inside' | 'before' | undefined

  beforeAll(async () => {
    outage = usingPostgres ? await postgresOutage() : await embeddedOutage()
    const config = loadConfig(testEnv({ dataDir, redisPrefix }, outage.env))
    app = await buildApp({ config, logger: false, ...(outage.embedded !== undefined && { embedded: outage.embedded }) })
    for (const phase of ['before', 'inside'] as const) {
      app.records.hooks.on('sala092', phase, async () => {
        if (cutInside !== phase) return
        cutInside = undefined
        await outage.down()
      })
    }
    token = await login(app)
  })

  // A test that failed half-way must not leave the next one without a database.
  afterEach(async () => {
    cutInside = undefined
    await outage.up()
  })

  afterAll(async () => {
    await app?.close()
    await outage?.close()
    await flushPrefix(redisPrefix)
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** Polls until a create succeeds again (the service was not restarted). */
  async function recovered (): Promise<void> {
    const api = client(app, token)
    let status = 0
    for (let i = 0; i < 150 && status !== 201; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200))
      status = (await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'tras el corte' })).status
    }
    expect(status).toBe(201)
    expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200)
  }

  /** Every record has its history and every history entry its record: nothing half written. */
  async function consistent (): Promise<void> {
    const [orphans] = await outage.query<{ records: number, versions: number }>(
      `select (select count(*)::int from sala092 s where not exists (select 1 from sys_historial h where h.modulo = 'sala092' and h.registro = s._id and h.version = s._version)) as records,
              (select count(*)::int from sys_historial h where h.modulo = 'sala092' and not exists (select 1 from sala092 s where s._id = h.registro)) as versions`)
    expect(orphans).toEqual({ records: 0, versions: 0 })
  }

  it('answers 503 to reads and writes while the database is down, says not ready, and recovers by itself', async () => {
    const api = client(app, token)
    const created = await api.post('/sala092', { tipo_incidencia: 'urgente', descripcion: 'antes del corte' })
    expect(created.status).toBe(201)
    const id = created.body.data._id as string

    await outage.down()
    const refused = await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'durante el corte' })
    expectError(refused, 'SERVICIO_NO_DISPONIBLE')
    // It says when to try again, as a file store's outage does.
    expect(refused.headers['retry-after']).toBe('5')
    expectError(await api.put(`/sala092/${id}`, { estado: 'en_curso' }), 'SERVICIO_NO_DISPONIBLE')
    expectError(await api.del(`/sala092/${id}`), 'SERVICIO_NO_DISPONIBLE')
    expectError(await api.get(`/sala092/${id}`), 'SERVICIO_NO_DISPONIBLE')
    expectError(await api.get('/sala092'), 'SERVICIO_NO_DISPONIBLE')
    expectError(await client(app).post('/auth/login', { username: ADMIN.username, password: ADMIN.password }), 'SERVICIO_NO_DISPONIBLE')
    const ready = await app.inject({ method: 'GET', url: '/ready' })
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toEqual(errorOf('SERVICIO_NO_DISPONIBLE'))
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200)

    await outage.up()
    await recovered()
    const read = await api.get(`/sala092/${id}`)
    expect(read.status).toBe(200)
    expect(read.body.data).toMatchObject({ _version: 1, estado: 'pendiente' })
    expect((await outage.query('select 1 from sala092 where descripcion = $1', ['durante el corte'])).length).toBe(0)
    await consistent()
  }, 120_000)

  it('answers 503 when the database goes away inside a create\'s transaction, and writes nothing of it', async () => {
    const api = client(app, token)
    const before = (await outage.query<{ n: number }>('select count(*)::int as n from sala092'))[0]!.n
    cutInside = 'inside' // after the row and its history entry are written, before COMMIT
    expectError(await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'cortado dentro' }), 'SERVICIO_NO_DISPONIBLE')
    expect(cutInside).toBeUndefined()
    await outage.up()
    await recovered()
    expect((await outage.query('select 1 from sala092 where descripcion = $1', ['cortado dentro'])).length).toBe(0)
    expect((await outage.query<{ n: number }>('select count(*)::int as n from sala092'))[0]!.n).toBe(before + 1) // only recovered()'s
    await consistent()
  }, 120_000)

  it('answers 503 when the database goes away inside an update\'s transaction, and the record keeps its version', async () => {
    const api = client(app, token)
    const created = await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'para editar' })
    expect(created.status).toBe(201)
    const id = created.body.data._id as string
    cutInside = 'before' // the row is read and locked; the UPDATE is next
    expectError(await api.put(`/sala092/${id}`, { estado: 'resuelta' }), 'SERVICIO_NO_DISPONIBLE')
    expect(cutInside).toBeUndefined()
    await outage.up()
    await recovered()
    const read = await api.get(`/sala092/${id}`)
    expect(read.body.data).toMatchObject({ _version: 1, estado: 'pendiente' })
    expect((await outage.query('select version from sys_historial where registro = $1', [id])).length).toBe(1)
    await consistent()
  }, 120_000)

  // Only a PostgreSQL server has a "starting up" state (57P03); the embedded
  // database starts inside the process, so this case has no embedded twin.
  if (usingPostgres) it('answers 503 while PostgreSQL refuses connections because it is starting up (57P03)', async () => {
    const { cluster } = outage as Outage & { cluster: PgCluster }
    const api = client(app, token)
    await cluster.stop('fast')
    await cluster.start({ standby: true })
    let state = await cluster.state()
    for (let i = 0; i < 100 && state !== 'rejecting'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      state = await cluster.state()
    }
    expect(state).toBe('rejecting')
    // What a new connection meets now: SQLSTATE 57P03, cannot_connect_now.
    const probe = new pg.Client({ connectionString: cluster.url() })
    await expect(probe.connect()).rejects.toMatchObject({ code: '57P03' })
    await probe.end().catch(() => undefined)

    expectError(await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'arrancando' }), 'SERVICIO_NO_DISPONIBLE')
    expectError(await api.get('/sala092'), 'SERVICIO_NO_DISPONIBLE')
    expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(503)

    await cluster.stop('fast')
    await cluster.start()
    await recovered()
    await consistent()
  }, 120_000)
})
