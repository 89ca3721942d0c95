/**
 * Admission ahead of Redis (stores/admission.ts; docs/decisions.md
 * "Admission without a round trip"): a token seen a moment ago is admitted
 * from the instance's copies and counted locally, its hits added in Redis
 * within 100 ms, or at once (at most every 10 ms) when a window holds a
 * two-hundredth of its limit unsent; the last tenth of a limit, and every request while
 * the link to Redis is not whole, is decided by Redis. On a redis-server of
 * this file's own, shared by two instances.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, client, login } from '../helpers/http.js'
import { commandCalls, startRedisServer, type RedisServer } from '../helpers/redis-server.js'

let h: Harness
let server: RedisServer
let redis: Redis
/** Two instances at the default token limit (1,000): 900 hits counted ahead of Redis, the last 100 by Redis. */
let a: FastifyInstance
let b: FastifyInstance

beforeAll(async () => {
  h = await createHarness()
  server = await startRedisServer(['--save', '', '--appendonly', 'no'])
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 })
  const env = { REDIS_URL: server.url, RATE_LIMIT_TOKEN_MAX: '1000', RATE_LIMIT_TOKEN_WINDOW: '1h' }
  a = await h.app({ env })
  b = await h.app({ env })
})
afterAll(async () => {
  await h?.close()
  redis?.disconnect()
  await server?.destroy()
})

const jtiOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti
const remaining = (res: { headers: Record<string, unknown> }): number => Number(res.headers['ratelimit-remaining'])
/** Past the lazy flush (stores/admission.ts LAZY_FLUSH_MS, 100 ms). */
const settle = async (): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, 300)) }

describe('a token seen a moment ago', () => {
  it('is admitted without a Redis command; its hits reach Redis within milliseconds, counted exactly', async () => {
    const token = await login(a)
    const api = client(a, token)
    const first = await api.get('/me') // read from Redis: the session and user are copied
    expect(first.status).toBe(200)
    await settle()
    await redis.config('RESETSTAT')
    const seen: number[] = []
    for (let i = 0; i < 20; i++) seen.push(remaining(await api.get('/me')))
    const during = commandCalls(await redis.info('commandstats'))
    // Each request counted here: the headers go down one by one, as Redis's own count would.
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => remaining(first) - 1 - i))
    // Fewer scripts than requests: the hits of each few milliseconds are added together.
    expect(during.evalsha ?? 0).toBeLessThan(20)
    await settle()
    expect(Number(await redis.get(`${h.redisPrefix}rl:tok:${jtiOf(token)}`))).toBe(21)
  })

  it('far from a large limit, a busy instance adds its hits lazily: one script per 100 ms, not per 10', async () => {
    const roomy = await h.app({ env: { REDIS_URL: server.url, RATE_LIMIT_TOKEN_MAX: '1000000', RATE_LIMIT_TOKEN_WINDOW: '1h' } })
    const token = await login(roomy)
    const api = client(roomy, token)
    expect((await api.get('/me')).status).toBe(200)
    await settle()
    await redis.config('RESETSTAT')
    const started = Date.now()
    for (let i = 0; i < 100; i++) expect((await api.get('/me')).status).toBe(200)
    const elapsed = Date.now() - started
    const scripts = commandCalls(await redis.info('commandstats')).evalsha ?? 0
    // At most one flush per lazy window (and one at its start); every 10 ms would be elapsed / 10.
    expect(scripts).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1)
    await settle()
    expect(Number(await redis.get(`${h.redisPrefix}rl:tok:${jtiOf(token)}`))).toBe(101)
  })

  it('logged out on another instance is refused at once', async () => {
    const token = await login(a)
    for (let i = 0; i < 3; i++) expect((await call(b, 'GET', '/me', { token })).status).toBe(200)
    expect((await call(a, 'POST', '/auth/logout', { token })).status).toBe(200)
    expect((await call(b, 'GET', '/me', { token })).status).toBe(401)
  })

  it('is asked of Redis again once the connection listening for changes broke: a logout meanwhile is not missed', async () => {
    const token = await login(a)
    for (let i = 0; i < 3; i++) expect((await call(b, 'GET', '/me', { token })).status).toBe(200)
    // Every listening connection closed: announcements sent now reach nobody.
    await redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
    expect((await call(a, 'POST', '/auth/logout', { token })).status).toBe(200)
    expect((await call(b, 'GET', '/me', { token })).status).toBe(401)
  })
})

describe('a limit shared by two instances', () => {
  // Hits counted ahead of Redis reach it once an instance holds 5 unsent
  // (a two-hundredth of 1,000), at most every 10 ms; the last tenth
  // of a limit (here 100 requests) is decided by Redis hit by hit. A client
  // alternating between instances as fast as this test can send stays far
  // below a tenth of the limit per 10 ms, so the limit holds exactly
  // (docs/decisions.md "Admission without a round trip" gives the bound).
  it('admits exactly its number of requests, alternating between them; the last tenth is decided by Redis', async () => {
    const token = await login(a)
    const statuses: number[] = []
    const shown: number[] = []
    for (let i = 0; i < 1010; i++) {
      const res = await call(i % 2 === 0 ? a : b, 'GET', '/me', { token })
      statuses.push(res.status)
      shown.push(remaining(res))
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(1000)
    expect(statuses.slice(1000)).toEqual(Array(10).fill(429))
    // The last admitted saw nothing left; counted ahead, an instance may show a few more left than
    // Redis holds (the other's hits of the last milliseconds), never fewer than this request's own.
    expect(shown[999]).toBe(0)
    for (let i = 0; i < 1000; i++) expect(shown[i]).toBeLessThanOrEqual(1000 - 1 - Math.floor(i / 2))
    await settle()
    expect(Number(await redis.get(`${h.redisPrefix}rl:tok:${jtiOf(token)}`))).toBe(1010)
  })
})
