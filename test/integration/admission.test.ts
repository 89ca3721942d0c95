/**
 * stores/admission.ts against both implementations (in-process always,
 * Redis when REDIS_URL is set, under this file's prefix): a request's rate
 * counters and its session lookup, asked together, answer what the two
 * stores answer apart. That with Redis it is one command is counted over
 * HTTP in hot-path.test.ts; that the admissions of one turn are one
 * command between them, below.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { admitFor, type Admission, type Admit } from '../../stores/admission.js'
import type { RateLimitStore, Window } from '../../stores/rate-limits/contract.js'
import { MemoryRateLimitStore } from '../../stores/rate-limits/memory.js'
import { RedisRateLimitStore } from '../../stores/rate-limits/redis.js'
import type { SessionStore, UserSnapshot } from '../../stores/sessions/contract.js'
import { MemorySessionStore } from '../../stores/sessions/memory.js'
import { RedisSessionStore } from '../../stores/sessions/redis.js'
import { commandCalls, usePrivateRedis } from '../helpers/redis-server.js'
import { flushPrefix, newRedisPrefix, testRedis, usingRedis } from '../helpers/services.js'

const prefix = newRedisPrefix()
const redis = usingRedis ? testRedis() : undefined
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

/**
 * The admissions of one turn of the event loop are one script run
 * (core/coalesce.ts): on a redis-server of this file's own, so that
 * INFO commandstats counts this file's commands only.
 */
describe('redis admissions issued in one turn', () => {
  const redis = usePrivateRedis()
  const p = 'admit:'

  /** A Redis admission whose session cache holds one active session of `user`'s (`jti-known`). */
  async function admission (): Promise<{ admit: Admit, sessions: RedisSessionStore }> {
    const sessions = new RedisSessionStore(redis.client, p)
    const admit = admitFor(new RedisRateLimitStore(redis.client, p), sessions)
    const miss = await admit([], { jti: 'jti-known', userId: user.id })
    await sessions.fill(0, { session: { jti: 'jti-known', value: { state: 'active', userId: user.id }, ttlMs: 60_000 }, user: { snapshot: user, ttlMs: 60_000 } }, miss.found!.stamp)
    return { admit, sessions }
  }

  /** Seven requests: anonymous, the known token, an unknown one, another user's. */
  const requests = (tag: string): Array<[Window[], { jti: string, userId: string } | undefined]> => {
    const ip = { key: `${tag}:ip`, windowMs: 60_000 }
    const tok = { key: `${tag}:tok`, windowMs: 30_000 }
    const known = { jti: 'jti-known', userId: user.id }
    return [
      [[ip], undefined],
      [[ip, tok], known],
      [[ip], { jti: 'jti-unknown', userId: user.id }],
      [[ip, tok], known],
      [[ip], { jti: 'jti-known', userId: 'USR-2026-00002' }],
      [[ip], undefined],
      [[ip, tok], known],
    ]
  }

  it('answer what the same admissions answer one after another, in one EVALSHA', async () => {
    const { admit, sessions } = await admission()
    const sequential: Admission[] = []
    for (const [windows, token] of requests('seq')) sequential.push(await admit(windows, token))
    await redis.client.config('RESETSTAT')
    const concurrent = await Promise.all(requests('con').map(async ([windows, token]) => admit(windows, token)))
    const calls = commandCalls(await redis.client.info('commandstats'))
    expect(calls.evalsha).toBe(1)
    expect(calls.incr).toBe(10)

    const strip = (a: Admission): unknown => ({ counts: a.counters.map((c) => c.count), found: a.found })
    expect(concurrent.map(strip)).toEqual(sequential.map(strip))
    expect(concurrent.map((a) => a.counters.map((c) => c.count))).toEqual([[1], [2, 1], [3], [4, 2], [5], [6], [7, 3]])
    expect(concurrent[1]!.found).toEqual(await sessions.lookup('jti-known', user.id))
    expect(concurrent.map((a) => a.found === undefined ? 'anonymous' : a.found.session === null ? 'no session' : a.found.user === null ? 'no user' : 'found'))
      .toEqual(['anonymous', 'found', 'no session', 'found', 'no user', 'anonymous', 'found'])
    for (const a of concurrent) for (const c of a.counters) expect(c.resetMs).toBeGreaterThan(25_000)
  })

  it('an admission whose keys fail in the script is rejected alone; its turn-mates are admitted', async () => {
    const { admit, sessions } = await admission()
    await redis.client.lpush(`${p}sess:jti-wrongtype`, 'x') // GET on a list fails
    const results = await Promise.allSettled([
      admit([{ key: 'fail:ip', windowMs: 60_000 }]),
      admit([{ key: 'fail:ip', windowMs: 60_000 }], { jti: 'jti-wrongtype', userId: user.id }),
      admit([{ key: 'fail:ip', windowMs: 60_000 }], { jti: 'jti-known', userId: user.id }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/)
    // The failed one was counted before its read failed (a script is not rolled back): the third is the third hit.
    const admitted = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<Admission>).value)
    expect(admitted.map((a) => a.counters[0]!.count)).toEqual([1, 3])
    expect(admitted[1]!.found).toEqual(await sessions.lookup('jti-known', user.id))
  })
})
