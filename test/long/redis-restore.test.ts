/**
 * Revocation and deactivation hold whatever state Redis comes back in
 * (docs/operator-guide.md "Sessions and a Redis restore"). Each case runs a private redis-server with its own directory
 * and two instances on it: tokens are used on both (so Redis caches them as
 * active), Redis's state is captured, then on instance A a token is logged
 * out, a user deactivated and a jefe demoted to consulta; then Redis comes
 * back with the captured state — restarted from an RDB snapshot, from an
 * append-only file that lost its tail, or reloaded under the instances'
 * feet without them reconnecting. No revoked or deactivated token may work
 * on either instance afterwards, and a live one keeps working.
 */
import { copyFileSync, readdirSync, statSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ADMIN, PASSWORD, type Harness } from '../helpers/app.js'
import { client, login } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { reconnected, usePrivateRedis } from '../helpers/private-redis.js'
import type { RedisServer } from '../helpers/redis-server.js'
import { createUser } from '../helpers/users.js'
import { Redis } from 'ioredis'
import type { SessionFill, UserSnapshot } from '../../stores/sessions/contract.js'
import { RedisSessionStore } from '../../stores/sessions/redis.js'


const fixture = usePrivateRedis()
const { instances } = fixture
let h: Harness
beforeAll(() => { h = fixture.h })

interface Scene {
  /** Logged out on A after the capture. */
  loggedOut: string
  /** The same user's other token: stays valid. */
  live: string
  /** Its user is deactivated on A after the capture. */
  deactivated: string
  /** Its user, a jefe (may list users), is made consulta on A after the capture. */
  demoted: { id: string, token: string }
  deactivatedId: string
}

/** Users and tokens, each used on both instances so Redis caches them as active. */
async function prepare (a: FastifyInstance, b: FastifyInstance): Promise<Scene> {
  const admin = await login(a, ADMIN.username, ADMIN.password)
  const agente = await createUser(a, admin, 'agente')
  const gone = await createUser(a, admin, 'agente')
  const jefe = await createUser(a, admin, 'jefe')
  const scene: Scene = {
    loggedOut: await login(a, agente.username, PASSWORD),
    live: await login(b, agente.username, PASSWORD),
    deactivated: await login(a, gone.username, PASSWORD),
    deactivatedId: gone.id,
    demoted: { id: jefe.id, token: await login(b, jefe.username, PASSWORD) },
  }
  for (const app of [a, b]) {
    for (const t of [scene.loggedOut, scene.live, scene.deactivated]) expect((await client(app, t).get('/me')).status).toBe(200)
    expect((await client(app, scene.demoted.token).get('/usuarios?limit=1')).status).toBe(200)
  }
  return scene
}

/** On A: a logout, a deactivation and a demotion; each takes effect on both instances at once. */
async function revoke (a: FastifyInstance, b: FastifyInstance, scene: Scene): Promise<void> {
  const admin = client(a, await login(a, ADMIN.username, ADMIN.password))
  expect((await client(a, scene.loggedOut).post('/auth/logout')).status).toBe(200)
  expect((await admin.put(`/usuarios/${scene.deactivatedId}`, { activo: false })).status).toBe(200)
  expect((await admin.put(`/usuarios/${scene.demoted.id}`, { rol: 'consulta' })).status).toBe(200)
  await expectRevoked(b, scene)
}

async function expectRevoked (app: FastifyInstance, scene: Scene): Promise<void> {
  expectError(await client(app, scene.loggedOut).get('/me'), 'TOKEN_INVALIDO')
  expectError(await client(app, scene.deactivated).get('/me'), 'TOKEN_INVALIDO')
  expectError(await client(app, scene.deactivated).get('/denuncias'), 'TOKEN_INVALIDO')
  expectError(await client(app, scene.demoted.token).get('/usuarios?limit=1'), 'SIN_PERMISOS')
  expect((await client(app, scene.demoted.token).get('/me')).body.data.rol).toBe('consulta')
  expect((await client(app, scene.live).get('/me')).status).toBe(200)
}

describe('a Redis that comes back older', () => {
  it('restarted from an RDB snapshot taken before the revocations: nothing revoked works on either instance', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const [a, b] = await instances(redis)
    const scene = await prepare(a, b)
    const c = redis.client()
    await c.save()
    c.disconnect()
    await revoke(a, b, scene)
    await redis.shutdown()
    await redis.start() // loads the snapshot: sessions "active", old user snapshots, an old epoch
    await reconnected(a, b)
    await expectRevoked(b, scene) // the instance that did none of it
    await expectRevoked(a, scene)
  })

  it('restarted from an append-only file that lost its tail: nothing revoked works on either instance', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--auto-aof-rewrite-percentage', '0'])
    const [a, b] = await instances(redis)
    const scene = await prepare(a, b)
    const aofDir = join(redis.dir, 'appendonlydir')
    const incr = readdirSync(aofDir).find((f) => f.endsWith('.incr.aof'))!
    const size = statSync(join(aofDir, incr)).size // every reply so far came after its write was synced
    await revoke(a, b, scene)
    await redis.shutdown()
    truncateSync(join(aofDir, incr), size) // the tail with the revocations is lost
    await redis.start()
    await reconnected(a, b)
    await expectRevoked(b, scene)
    await expectRevoked(a, scene)
  })

  it('reloaded with an older state while the instances stay connected: caught by the epoch check', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes'])
    const [a, b] = await instances(redis)
    const scene = await prepare(a, b)
    const c = redis.client()
    try {
      await c.save()
      copyFileSync(join(redis.dir, 'dump.rdb'), join(redis.dir, 'before.rdb'))
      await revoke(a, b, scene)
      copyFileSync(join(redis.dir, 'before.rdb'), join(redis.dir, 'dump.rdb'))
      expect(await c.call('DEBUG', 'RELOAD', 'NOSAVE')).toBe('OK') // same server, same connections
      expect(await c.call('GET', `${h.redisPrefix}cache:epoch`)).not.toBeNull()
    } finally { c.disconnect() }
    // A made the revocations, so it knows the database's epoch is ahead of Redis's.
    await expectRevoked(a, scene)
    // B learns it from its periodic check of the database (every 2 s); run it now rather than wait.
    await b.syncRevocationEpoch()
    await expectRevoked(b, scene)
  })

  it('a Redis that lost everything (restarted empty) answers from the database, and the cache works again', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const [a, b] = await instances(redis)
    const scene = await prepare(a, b)
    await revoke(a, b, scene)
    await redis.shutdown()
    await redis.start()
    await reconnected(a, b)
    await expectRevoked(b, scene)
    await expectRevoked(a, scene)
    const c = redis.client()
    try {
      expect(await c.get(`${h.redisPrefix}cache:epoch`)).not.toBeNull() // repaired: cached again
      expect(await c.exists(`${h.redisPrefix}sess:${JSON.parse(Buffer.from(scene.live.split('.')[1]!, 'base64url').toString()).jti as string}`)).toBe(1)
    } finally { c.disconnect() }
  })
})

/** The Redis session store itself, on a private server: the cases an instance's own knowledge cannot cover. */
describe('the Redis session store', () => {
  const prefix = 'unit:'
  const user = (rol: string): UserSnapshot => ({ id: 'USR-2026-00001', username: 'u', nombre: 'U', rol, activo: true, personalId: null })
  const active = (jti: string): SessionFill => ({ session: { jti, value: { state: 'active', userId: 'USR-2026-00001' }, ttlMs: 60_000 } })
  let clients: Redis[] = []
  /** A store on its own connection, like an instance's (no offline queue). */
  const store = async (server: RedisServer): Promise<RedisSessionStore> => {
    const c = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true })
    c.on('error', () => undefined)
    clients.push(c)
    await c.connect()
    return new RedisSessionStore(c, prefix)
  }
  afterEach(() => {
    for (const c of clients) c.disconnect()
    clients = []
  })
  /** A lookup that the store trusts (checked on this connection by a fill at the database's epoch). */
  const warm = async (s: RedisSessionStore, epoch: number, values: SessionFill): Promise<void> => {
    await s.fill(epoch, values, (await s.lookup('-', 'USR-2026-00001')).stamp)
  }

  it('after a reconnection nothing is trusted until a database read confirms it, even by an instance that learnt nothing meanwhile', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const a = await store(redis)
    const b = await store(redis)
    await warm(a, 3, active('j1'))
    await warm(b, 3, {})
    expect((await b.lookup('j1', 'USR-2026-00001')).session).toEqual({ state: 'active', userId: 'USR-2026-00001' })
    const c = redis.client()
    await c.save()
    c.disconnect()
    await a.revokeSession('j1', 'USR-2026-00001', 60_000, 4) // b hears nothing of it
    expect((await b.lookup('j1', 'USR-2026-00001')).session?.state).toBe('revoked')
    await redis.shutdown()
    await redis.start() // epoch 3, j1 active: as b last knew it
    for (let i = 0; i < 100 && clients.some((c) => c.status !== 'ready'); i++) await new Promise((resolve) => setTimeout(resolve, 50))
    const seen = await b.lookup('j1', 'USR-2026-00001')
    expect(seen.session).toBeNull() // a miss: the database answers
    await b.fill(4, { session: { jti: 'j1', value: { state: 'revoked', userId: 'USR-2026-00001' }, ttlMs: 60_000 } }, seen.stamp)
    expect((await b.lookup('j1', 'USR-2026-00001')).session?.state).toBe('revoked')
    expect((await a.lookup('j1', 'USR-2026-00001')).session).toBeNull() // a reconnected too; it confirms for itself
  })

  it('a reconnection while a lookup waits for its read (its batch): a miss, not what answered', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const s = await store(redis)
    await warm(s, 3, active('j1'))
    expect((await s.lookup('j1', 'USR-2026-00001')).session?.state).toBe('active')
    const seen = await s.lookupWith('j1', 'USR-2026-00001', async (keys) => {
      const values = await s.client.mget(...keys)
      s.client.emit('ready') // what ioredis says after a reconnection: this answer may be an older Redis's
      return values
    })
    expect(seen.session).toBeNull()
    expect(seen.user).toBeNull()
  })

  it('revocations applied out of order: a fill read before the later one never lands in between', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const s = await store(redis)
    await warm(s, 3, { user: { snapshot: user('jefe'), ttlMs: 60_000 } })
    expect((await s.lookup('-', 'USR-2026-00001')).user?.rol).toBe('jefe')
    await s.dropUser('USR-2026-00001', 5) // epoch 5 reaches Redis before 4
    const stale = await s.lookup('-', 'USR-2026-00001')
    expect(stale.user).toBeNull()
    await s.fill(3, { user: { snapshot: user('jefe'), ttlMs: 60_000 } }, stale.stamp) // read before 4 and 5 committed
    await s.revokeSession('j9', 'USR-2026-00002', 60_000, 4)
    const c = redis.client()
    try {
      expect(await c.get(`${prefix}cache:epoch`)).toBe('5')
    } finally { c.disconnect() }
    expect((await s.lookup('-', 'USR-2026-00001')).user).toBeNull()
  })
})
