/**
 * Id counters leased to the one instance drawing them (stores/sequences/leases.ts;
 * docs/decisions.md "Ids without a round trip"): the holder draws in memory
 * and writes back every few milliseconds; a second drawer gets the counter
 * back from Redis, in order, with no number twice and none skipped. On a
 * redis-server of this file's own, each "instance" a store on a connection
 * of its own, then two instances of the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { createHash } from 'node:crypto'
import { connect } from 'node:net'
import { NEXT_MANY, RedisSequenceStore } from '../../stores/sequences/redis.js'
import { IDLE_MS, LEASE_MS } from '../../stores/sequences/leases.js'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login } from '../helpers/http.js'
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js'

let server: RedisServer
let redis: Redis
const clients: Redis[] = []
const prefix = 'leases:'

beforeAll(async () => {
  server = await startRedisServer(['--save', '', '--appendonly', 'no'])
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 })
})
afterAll(async () => {
  for (const c of clients) c.disconnect()
  redis?.disconnect()
  await server?.destroy()
})

/** One instance's store, on its own connection (as plugins/redis.ts makes it). */
async function instance (): Promise<{ store: RedisSequenceStore, client: Redis }> {
  const client = new Redis(server.url, { enableAutoPipelining: false, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  client.on('error', () => undefined)
  clients.push(client)
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  return { store: new RedisSequenceStore(client, prefix), client }
}

/** The instance's draw, seeding the counter (from `floor`, the table's highest) when it does not trust it yet. */
async function draw (store: RedisSequenceStore, key: string, floor = 0): Promise<number> {
  return (await store.next(key)) ?? await store.seedAndNext(key, floor)
}
/**
 * The id draws sent to Redis (one script each) while `fn` runs, as Redis's
 * MONITOR saw them: read off a plain socket, since ioredis's monitor() can
 * take a line that comes in the same packet as MONITOR's OK for a reply to
 * no command ("Command queue state error") when Redis is busy.
 */
async function drawsSent (fn: () => Promise<void>): Promise<number> {
  const sha = createHash('sha1').update(NEXT_MANY).digest('hex')
  const { port } = new URL(server.url)
  const socket = connect(Number(port), '127.0.0.1')
  let seen = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { seen += chunk })
  socket.write('MONITOR\r\n')
  try {
    while (!seen.startsWith('+OK\r\n')) await settle(5)
    await fn()
    await redis.ping() // everything sent before it was seen
    await settle(20)
  } finally {
    socket.destroy()
  }
  // The script by its hash, or by its text the first time a connection runs it (its start as MONITOR escapes it).
  const text = `"eval" "${JSON.stringify(NEXT_MANY.slice(0, 40)).slice(1, -1)}`
  return seen.split('\r\n').filter((line) => line.includes(`"evalsha" "${sha}"`) || line.includes(text)).length
}
const settle = async (ms = 60): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i)

describe('a counter one instance draws', () => {
  it('is leased to it: its draws send no Redis command, and Redis learns every number within milliseconds', async () => {
    const { store } = await instance()
    expect(await draw(store, 'ONE')).toBe(1)
    // This draw took the lease, a script the count sees (so that its zeros below mean something).
    expect(await drawsSent(async () => { expect(await draw(store, 'ONE')).toBe(2) })).toBe(1)
    expect(await redis.get(`${prefix}seq:ONE:lease`)).not.toBeNull()
    const drawn: number[] = []
    expect(await drawsSent(async () => { for (let i = 0; i < 200; i++) drawn.push(await draw(store, 'ONE')) })).toBe(0)
    expect(drawn).toEqual(range(3, 200))
    await settle()
    expect(Number(await redis.get(`${prefix}seq:ONE`))).toBe(202)
    await store.close()
  })

  it('given up at close, written back: another instance draws the next number', async () => {
    const a = await instance()
    const b = await instance()
    for (let i = 0; i < 5; i++) await draw(a.store, 'CLOSE')
    await a.store.close()
    expect(await redis.get(`${prefix}seq:CLOSE:lease`)).toBeNull()
    expect(Number(await redis.get(`${prefix}seq:CLOSE`))).toBe(5)
    expect(await draw(b.store, 'CLOSE')).toBe(6)
    await b.store.close()
  })

  it('left idle, is given up: Redis holds no lease and the counter is written back', async () => {
    const { store } = await instance()
    for (let i = 0; i < 3; i++) await draw(store, 'IDLE')
    await settle(IDLE_MS + 100)
    expect(await redis.get(`${prefix}seq:IDLE:lease`)).toBeNull()
    expect(Number(await redis.get(`${prefix}seq:IDLE`))).toBe(3)
    await store.close()
  })
})

describe('a counter two instances draw', () => {
  it('drawn by each in turn: consecutive numbers in the order drawn, then drawn from Redis (marked shared)', async () => {
    const a = await instance()
    const b = await instance()
    for (let i = 0; i < 4; i++) await draw(a.store, 'TURN') // a holds it
    const drawn: number[] = []
    for (let i = 0; i < 30; i++) drawn.push(await draw(i % 2 === 0 ? b.store : a.store, 'TURN'))
    expect(drawn).toEqual(range(5, 30))
    expect(await redis.get(`${prefix}seq:TURN:lease`)).toBeNull()
    expect(await redis.get(`${prefix}seq:TURN:shared`)).not.toBeNull()
    await Promise.all([a.store.close(), b.store.close()])
  })

  it('drawn by both at once, blocks too: every number once, none skipped', async () => {
    const a = await instance()
    const b = await instance()
    await draw(a.store, 'BOTH')
    await draw(a.store, 'BOTH') // a holds it
    await draw(b.store, 'BOTH')
    const blocks = await Promise.all(range(0, 300).map(async (i) => {
      const store = i % 3 === 0 ? b.store : a.store
      const count = i % 50 === 0 ? 10 : 1
      const first = (await store.next('BOTH', count))!
      return range(first, count)
    }))
    const all = blocks.flat().sort((x, y) => x - y)
    expect(all).toEqual(range(4, all.length))
    await Promise.all([a.store.close(), b.store.close()])
  })

  it('handed over again and again while its holder draws without pause: every number once, none skipped', async () => {
    const a = await instance()
    const b = await instance()
    await draw(b.store, 'LOOP')
    let running = true
    const busy = (async () => {
      const got: number[] = []
      // A turn of the event loop between draws: renewals go out and their answers come back between them.
      while (running) {
        got.push(await draw(a.store, 'LOOP'))
        await new Promise((resolve) => setImmediate(resolve))
      }
      return got
    })()
    const asked: number[] = []
    for (let round = 0; round < 10; round++) {
      // No longer shared: a's next draw takes the lease; b's draw then takes it back from a busy holder.
      await redis.del(`${prefix}seq:LOOP:shared`)
      while (await redis.get(`${prefix}seq:LOOP:lease`) === null) await settle(1)
      await settle(5)
      asked.push(await draw(b.store, 'LOOP'))
    }
    running = false
    const all = [...await busy, ...asked].sort((x, y) => x - y)
    expect(all).toEqual(range(2, all.length))
    await Promise.all([a.store.close(), b.store.close()])
  })

  it('held by an instance gone without a word: the other waits for the lease to end, then draws above what Redis heard', async () => {
    const a = await instance()
    const b = await instance()
    for (let i = 0; i < 10; i++) await draw(a.store, 'GONE')
    expect(await redis.get(`${prefix}seq:GONE:lease`)).not.toBeNull()
    a.client.disconnect() // no write-back, no release: as a process killed
    const heard = Number(await redis.get(`${prefix}seq:GONE`))
    const n = await draw(b.store, 'GONE')
    expect(n).toBeGreaterThan(heard)
    expect(await redis.pttl(`${prefix}seq:GONE:lease`)).toBe(-2)
    await b.store.close()
  }, 5 * LEASE_MS)
})

describe('two instances of the service creating records', () => {
  let h: Harness
  let a: FastifyInstance
  let b: FastifyInstance

  beforeAll(async () => {
    h = await createHarness()
    const env = { REDIS_URL: server.url }
    a = await h.app({ env })
    b = await h.app({ env })
  })
  afterAll(async () => { await h?.close() })

  it('alone, an instance draws its ids without Redis; in turn, the two get successive ids in order', async () => {
    const [ta, tb] = [await login(a), await login(b)]
    const create = async (app: FastifyInstance, token: string): Promise<string> => {
      const res = await call(app, 'POST', '/sala092', { token, body: { tipo_incidencia: 'normal', descripcion: 'llamada' } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      return res.body.data._id as string
    }
    const seq = (id: string): number => Number(id.split('-').at(-1))
    const first = seq(await create(a, ta))
    await create(a, ta)
    const alone: number[] = []
    expect(await drawsSent(async () => { for (let i = 0; i < 20; i++) alone.push(seq(await create(a, ta))) })).toBe(0)
    expect(alone).toEqual(range(first + 2, 20))
    const inTurn: number[] = []
    for (let i = 0; i < 10; i++) inTurn.push(seq(await create(i % 2 === 0 ? b : a, i % 2 === 0 ? tb : ta)))
    expect(inTurn).toEqual(range(first + 22, 10))
  })
})
