/**
 * Two instances on a Sentinel-managed Redis (REDIS_SENTINELS;
 * docs/operator-guide.md "High availability") follow a promotion by
 * themselves. The replica is made to lag first (cut off from the primary
 * while ids are drawn and a token is revoked there), then the primary
 * is killed with -9 and the Sentinels promote the lagging replica: its
 * counters are behind and it has never heard of the revocation. Afterwards
 * no id may repeat or fall below an issued one, the revoked token must stay
 * refused on both instances, the rate limit must still be one count shared
 * by both, and an event signal must reach a subscriber made before the
 * failover.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, ADMIN, type Harness } from '../helpers/app.js'
import { call, client, login } from '../helpers/http.js'
import { reconnected } from '../helpers/private-redis.js'
import { startSentinelGroup, type SentinelGroup } from '../helpers/redis-sentinel.js'
import { freePort } from '../helpers/free-port.js'

const seq = (id: string): number => Number(/-(\d{5,})$/.exec(id)![1])
const CALL = { tipo_incidencia: 'normal', descripcion: 'centinela' }

let h: Harness
let group: SentinelGroup
let a: FastifyInstance
let b: FastifyInstance
let metricsPort: number
beforeAll(async () => {
  h = await createHarness()
  group = await startSentinelGroup()
  // REDIS_URL emptied: the run's own Redis (when CI sets it) is not this test's.
  // A token limit below the smallest counted ahead of Redis (stores/rate-limits/local-counts.ts
  // LOCAL_MIN): every hit is counted by Redis itself, so both instances' counts are compared exactly.
  const env = { ...group.env, REDIS_URL: '', RATE_LIMIT_TOKEN_MAX: '99' }
  metricsPort = await freePort()
  a = await h.app({ env: { ...env, METRICS_PORT: String(metricsPort) } })
  b = await h.app({ env })
})

/** One sample of instance a's GET /metrics. */
async function metric (line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  return Number(line.exec(text)?.[1] ?? NaN)
}
afterAll(async () => {
  await h?.close()
  await group?.destroy()
})

async function createOn (token: string, apps: FastifyInstance[]): Promise<string[]> {
  const res = await Promise.all(apps.map((app) => client(app, token).post('/sala092', CALL)))
  expect(res.filter((r) => r.status !== 201).map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([])
  return res.map((r) => r.body.data._id as string)
}

describe('on Redis Sentinel', () => {
  it('starts on the primary the Sentinels name, and counts no change of primary yet', async () => {
    expect([a.stores.kind, b.stores.kind]).toEqual(['redis', 'redis'])
    expect(a.redisLink.primary).toBe(`127.0.0.1:${await group.primaryPort()}`)
    expect(a.redisLink.primaryChanges).toBe(0)
  })

  it('kill -9 of the primary after the replica lagged: ids above every issued one, the revoked token refused, limits shared, signals delivered', async () => {
    const token = await login(a, ADMIN.username, ADMIN.password)
    const revoked = await login(b, ADMIN.username, ADMIN.password)
    for (const app of [a, b]) expect((await call(app, 'GET', '/me', { token: revoked })).status).toBe(200) // cached as active on both
    const issued = await createOn(token, [a, b, a, b])
    const heard: string[] = []
    await b.stores.signals.subscribe('centinela', (m) => { heard.push(m) })

    // The replica misses what follows: draws and the logout exist on the primary alone.
    const oldPrimary = await group.primary()
    const replica = group.servers.find((s) => s !== oldPrimary)!
    await group.detach(replica)
    issued.push(...await createOn(token, [a, b, a, b, a, b]))
    expect((await call(a, 'POST', '/auth/logout', { token: revoked })).status).toBe(200)
    await oldPrimary.kill()
    // Meanwhile Redis is not there: 503, counted as such.
    expect((await call(a, 'GET', '/me', { token })).status).toBe(503)
    expect(await group.promotedFrom(oldPrimary.port)).toBe(replica.port)
    // The new primary's counter is behind what was issued: the lag happened.
    const top = Math.max(...issued.map(seq))
    const c = group.client()
    try {
      const counter = Number(await c.get(`${h.redisPrefix}seq:${issued[0]!.replace(/-\d+$/, '')}`))
      expect(counter).toBeLessThan(top)
    } finally { c.disconnect() }
    await reconnected(a, b)

    // No id repeated or below an issued one, from either instance.
    const fresh = await createOn(token, [a, b, a, b, a, b])
    expect(fresh.map(seq).filter((n) => n <= top), `new ids at or below ${top}`).toEqual([])
    expect(new Set(fresh).size).toBe(fresh.length)

    // Revoked on the old primary only: still refused on both instances.
    for (const app of [a, b]) expect((await call(app, 'GET', '/me', { token: revoked })).status).toBe(401)
    expect((await call(a, 'GET', '/me', { token })).status).toBe(200)

    // One count for both instances, on the new primary.
    const first = await a.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${token}` } })
    const second = await b.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${token}` } })
    expect(Number(second.headers['ratelimit-remaining'])).toBe(Number(first.headers['ratelimit-remaining']) - 1)

    // The subscription made before the failover hears a signal sent after it.
    for (let i = 0; i < 100 && heard.length === 0; i++) {
      a.stores.signals.publish('centinela', 'después')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(heard[0]).toBe('después')

    for (const app of [a, b]) {
      expect(app.redisLink.primary).toBe(`127.0.0.1:${replica.port}`)
      expect(app.redisLink.primaryChanges).toBe(1)
    }
    expect(await metric(/^redis_primary_changes_total (\d+)$/m)).toBe(1)
    expect(await metric(/^redis_reconnects_total (\d+)$/m)).toBeGreaterThanOrEqual(1)
    expect(await metric(/^dependency_unavailable_total\{dependencia="redis"\} (\d+)$/m)).toBeGreaterThanOrEqual(1)
  })
})
