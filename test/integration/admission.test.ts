/**
 * stores/admission.ts against both implementations (in-process always,
 * Redis when REDIS_URL is set, under this file's prefix): a request's rate
 * counters and its session lookup, asked together, answer what the two
 * stores answer apart. That with Redis it is one command is counted over
 * HTTP in hot-path.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { admitFor } from '../../stores/admission.js'
import type { RateLimitStore } from '../../stores/rate-limits/contract.js'
import { MemoryRateLimitStore } from '../../stores/rate-limits/memory.js'
import { RedisRateLimitStore } from '../../stores/rate-limits/redis.js'
import type { SessionStore, UserSnapshot } from '../../stores/sessions/contract.js'
import { MemorySessionStore } from '../../stores/sessions/memory.js'
import { RedisSessionStore } from '../../stores/sessions/redis.js'
import { flushPrefix, newRedisPrefix, usingRedis } from '../helpers/services.js'

const prefix = newRedisPrefix()
const redis = usingRedis ? new Redis(process.env.REDIS_URL!) : undefined
afterAll(async () => {
  await flushPrefix(prefix)
  redis?.disconnect()
})

const kinds: Array<[string, () => { rateLimits: RateLimitStore, sessions: SessionStore }]> = [
  ['memory', () => ({ rateLimits: new MemoryRateLimitStore(), sessions: new MemorySessionStore() })],
]
if (redis !== undefined) kinds.push(['redis', () => ({ rateLimits: new RedisRateLimitStore(redis, prefix), sessions: new RedisSessionStore(redis, prefix) })])

const user: UserSnapshot = { id: 'USR-2026-00001', username: 'ana', nombre: 'Ana', rol: 'agente', activo: true, personalId: null }

describe.each(kinds)('%s admission', (kind, make) => {
  it('counts every window, with or without a token, and looks the token\'s session up as lookup() does', async () => {
    const { rateLimits, sessions } = make()
    const admit = admitFor(rateLimits, sessions)
    const ip = { key: `adm-ip-${kind}`, windowMs: 60_000 }
    const tok = { key: `adm-tok-${kind}`, windowMs: 60_000 }
    const anonymous = await admit([ip])
    expect(anonymous.counters.map((c) => c.count)).toEqual([1])
    expect(anonymous.found).toBeUndefined()

    const token = { jti: `jti-${kind}`, userId: user.id }
    const miss = await admit([ip, tok], token)
    expect(miss.counters.map((c) => c.count)).toEqual([2, 1])
    expect(miss.counters[0]!.resetMs).toBeGreaterThan(55_000)
    expect(miss.found).toMatchObject({ session: null, user: null })

    await sessions.fill(0, { session: { jti: token.jti, value: { state: 'active', userId: user.id }, ttlMs: 60_000 }, user: { snapshot: user, ttlMs: 60_000 } }, miss.found!.stamp)
    const hit = await admit([ip, tok], token)
    expect(hit.counters.map((c) => c.count)).toEqual([3, 2])
    expect(hit.found).toEqual(await sessions.lookup(token.jti, token.userId))
    expect(hit.found).toMatchObject({ session: { state: 'active', userId: user.id }, user })

    // Another user's snapshot is not this token's: a miss for the user only.
    const other = await admit([ip], { jti: token.jti, userId: 'USR-2026-00002' })
    expect(other.found).toMatchObject({ session: { state: 'active', userId: user.id }, user: null })
  })
})
