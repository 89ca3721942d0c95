/**
 * Ids survive a Redis that comes back older (docs/operator-guide.md "Ids and a Redis restore"). Each case runs
 * a private redis-server and two instances on it: records are created, Redis
 * saves a snapshot, more are created (and some numbers are drawn by creates
 * that then fail: gaps), then Redis comes back with the snapshot's older
 * counters. No create may answer 409, no new id may repeat or fall below a
 * stored one, and no gap below the highest stored id may be filled.
 */
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ADMIN, PASSWORD, type Harness } from '../helpers/app.js'
import { client, login } from '../helpers/http.js'
import { reconnected, usePrivateRedis } from '../helpers/private-redis.js'
import type { RedisServer } from '../helpers/redis-server.js'
import { RedisSequenceStore } from '../../stores/sequences/redis.js'

const YEAR = Number(new Intl.DateTimeFormat('en', { timeZone: 'Europe/Madrid', year: 'numeric' }).format(new Date()))
const CALL = { tipo_incidencia: 'normal', descripcion: 'x' }
const DENUNCIA = { denunciante_nombre: 'Ana Pérez', tipo: 'robo', fecha_hechos: '2026-03-01 10:00:00', lugar_hechos: 'Calle Mayor 1', descripcion: 'Robo' }

const fixture = usePrivateRedis()
const { instances } = fixture
let h: Harness
beforeAll(() => { h = fixture.h })

const seq = (id: string): number => Number(/^[A-Z0-9]{3}-\d{4}-(\d{5,})$/.exec(id)![1])
let users = 0

type Module = 'sala092' | 'usuarios' | 'denuncias'
const body = (mod: Module): Record<string, unknown> => mod === 'sala092'
  ? CALL
  : mod === 'denuncias'
    ? DENUNCIA
    : { username: `idr${++users}.${Date.now() % 100000}`, password: PASSWORD, nombre: 'N', rol: 'agente' }

/** One create per entry, all at once: `app` and module per entry. Every answer must be 201. */
async function createAll (token: string, on: Array<[FastifyInstance, Module]>): Promise<string[]> {
  const res = await Promise.all(on.map(([app, mod]) => client(app, token).post(`/${mod}`, body(mod))))
  expect(res.filter((r) => r.status !== 201).map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([])
  return res.map((r) => r.body.data._id as string)
}

/** Stored sequence numbers of a prefix this year (deleted rows included). */
async function stored (table: string, prefix: string): Promise<number[]> {
  const rows = await h.db.query<{ _id: string }>(`select "_id" from "${table}" where "_id" like $1`, [`${prefix}-${YEAR}-%`])
  return rows.map((r) => seq(r._id))
}

/** A number drawn by a create that then failed (it drew, its insert never committed). */
async function failedDraw (server: RedisServer, key: string): Promise<number> {
  const c = server.client()
  try { return await c.incr(`${h.redisPrefix}seq:${key}`) } finally { c.disconnect() }
}

/** New ids: distinct, above every stored one, and none in a gap below the highest stored. */
function expectAbove (fresh: string[], before: number[], gaps: number[]): void {
  const numbers = fresh.map(seq)
  expect(new Set(numbers).size).toBe(numbers.length)
  const top = Math.max(...before)
  expect(numbers.filter((n) => n <= top), `new ids at or below ${top}`).toEqual([])
  expect(numbers.filter((n) => gaps.includes(n) && n < top)).toEqual([])
}

describe('ids after Redis comes back older', () => {
  it('restarted from an older RDB snapshot: no 409, every new id above every stored one, no gap filled', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const [a, b] = await instances(redis)
    const token = await login(a, ADMIN.username, ADMIN.password)
    await createAll(token, [[a, 'sala092'], [b, 'sala092'], [a, 'usuarios']])
    await redis.save()

    // The restored counter's next number is a gap: a stale draw would not even collide.
    const gaps: number[] = []
    for (let i = 0; i < 4; i++) {
      gaps.push(await failedDraw(redis, `092-${YEAR}`))
      await createAll(token, [[a, 'sala092'], [b, 'sala092']])
      await createAll(token, [[b, 'usuarios']])
    }
    await createAll(token, [[a, 'sala092']])
    const calls = await stored('sala092', '092')
    const usuarios = await stored('usuarios', 'USR')

    await redis.shutdown()
    await redis.start() // loads the snapshot: every counter is behind
    await reconnected(a, b)

    const on = Array.from({ length: 12 }, (_, i): [FastifyInstance, Module] => [i % 2 === 0 ? a : b, i % 3 === 2 ? 'usuarios' : 'sala092'])
    const fresh = await createAll(await login(b, ADMIN.username, ADMIN.password), on)
    expectAbove(fresh.filter((id) => id.startsWith('092-')), calls, gaps)
    expectAbove(fresh.filter((id) => id.startsWith('USR-')), usuarios, [])
  })

  it('reloaded older under connected instances: the one that issued notices, the other re-seeds on the collision', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes'])
    const [a, b] = await instances(redis)
    const token = await login(a, ADMIN.username, ADMIN.password)
    const both: Array<[FastifyInstance, Module]> = [[a, 'sala092'], [b, 'sala092'], [a, 'usuarios'], [b, 'usuarios'], [a, 'denuncias'], [b, 'denuncias']]
    await createAll(token, both)
    const c = redis.client()
    try {
      await c.save()
      copyFileSync(join(redis.dir, 'dump.rdb'), join(redis.dir, 'before.rdb'))
      const gap = await failedDraw(redis, `092-${YEAR}`)
      await createAll(token, [[a, 'sala092'], [a, 'sala092'], [a, 'usuarios'], [a, 'usuarios'], [a, 'denuncias']])
      const before = { sala092: await stored('sala092', '092'), usuarios: await stored('usuarios', 'USR'), denuncias: await stored('denuncias', 'DEN') }
      copyFileSync(join(redis.dir, 'before.rdb'), join(redis.dir, 'dump.rdb'))
      expect(await c.call('DEBUG', 'RELOAD', 'NOSAVE')).toBe('OK') // same server, same connections

      // A drew above the restored counter, whose next number is a gap: A notices before using it.
      const [call] = await createAll(token, [[a, 'sala092']])
      expectAbove([call!], before.sala092, [gap])
      // B drew nothing since: its stale draw is a stored id (one-statement create and
      // transaction), and the create proceeds after re-seeding.
      const [usuario, denuncia] = await createAll(token, [[b, 'usuarios'], [b, 'denuncias']])
      expectAbove([usuario!], before.usuarios, [])
      expectAbove([denuncia!], before.denuncias, [])
    } finally { c.disconnect() }
  })
})

describe('the Redis sequence store', () => {
  it('distrusts a counter that went back or a connection that is new, until seeded again', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const c = redis.client()
    try {
      if (c.status !== 'ready') await new Promise((resolve) => c.once('ready', resolve))
      const store = new RedisSequenceStore(c, 'idr:') // as the service makes it: once connected
      // Another instance draws K too: it is never leased (stores/sequences/leases.ts), each draw asks Redis.
      await c.set('idr:seq:K:shared', 'another-instance', 'PX', 60_000)
      expect(await store.next('K')).toBeNull()
      expect(await store.seedAndNext('K', 10)).toBe(11)
      expect(await store.next('K')).toBe(12)
      expect(await store.next('K')).toBe(13)
      await c.set('idr:seq:K', '11') // as Redis restored older
      expect(await store.next('K')).toBeNull() // 12: already drawn here
      expect(await store.seedAndNext('K', 5)).toBe(14) // above what it drew, whatever the floor
      expect(await store.next('K')).toBe(15)

      const ready = new Promise((resolve) => c.once('ready', resolve))
      c.disconnect(true) // a new connection: whatever answers may be another, older server
      await ready
      expect(await c.get('idr:seq:K')).toBe('15')
      expect(await store.next('K')).toBeNull()
      expect(await store.seedAndNext('K', 15)).toBe(16)
      expect(await store.next('K')).toBe(17)
    } finally { c.disconnect() }
  })

  it('a counter leased to the instance and restored older: it draws on above what it drew, and its renewal raises Redis\'s counter back', async () => {
    const redis = await fixture.start(['--save', '', '--appendonly', 'no'])
    const c = redis.client()
    try {
      if (c.status !== 'ready') await new Promise((resolve) => c.once('ready', resolve))
      const store = new RedisSequenceStore(c, 'idr:')
      expect(await store.seedAndNext('L', 10)).toBe(11)
      expect(await store.next('L')).toBe(12) // leased with this draw
      expect(await c.get('idr:seq:L:lease')).not.toBeNull()
      expect(await store.next('L')).toBe(13)
      await c.set('idr:seq:L', '11') // as Redis restored older
      expect(await store.next('L')).toBe(14)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(await c.get('idr:seq:L')).toBe('14')
      await store.close()
    } finally { c.disconnect() }
  })
})
