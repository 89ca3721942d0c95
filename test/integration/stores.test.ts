/**
 * The store contracts, run against both implementations: in-process always,
 * Redis when REDIS_URL is set (a real server, under this file's prefix),
 * and always a Sentinel-managed Redis of this file's own (a primary, a
 * replica and three Sentinels on loopback: test/helpers/redis-sentinel.ts)
 * through the client the service builds (stores/redis-client.ts).
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { AttemptLogStore } from '../../stores/attempt-logs/contract.js'
import { MemoryAttemptLogStore } from '../../stores/attempt-logs/memory.js'
import { RedisAttemptLogStore } from '../../stores/attempt-logs/redis.js'
import type { RateLimitStore } from '../../stores/rate-limits/contract.js'
import { MemoryRateLimitStore } from '../../stores/rate-limits/memory.js'
import { RedisRateLimitStore } from '../../stores/rate-limits/redis.js'
import type { SequenceStore } from '../../stores/sequences/contract.js'
import { MemorySequenceStore } from '../../stores/sequences/memory.js'
import { RedisSequenceStore } from '../../stores/sequences/redis.js'
import type { StreamSlotStore } from '../../stores/stream-slots/contract.js'
import { MemoryStreamSlotStore } from '../../stores/stream-slots/memory.js'
import { RedisStreamSlotStore } from '../../stores/stream-slots/redis.js'
import type { SignalStore } from '../../stores/signals/contract.js'
import { MemorySignalStore } from '../../stores/signals/memory.js'
import { RedisSignalStore } from '../../stores/signals/redis.js'
import type { IdempotencyStore } from '../../stores/idempotency/contract.js'
import { MemoryIdempotencyStore } from '../../stores/idempotency/memory.js'
import { RedisIdempotencyStore } from '../../stores/idempotency/redis.js'
import { redisClient } from '../../stores/redis-client.js'
import { flushPrefix, newRedisPrefix, testRedis, usingRedis } from '../helpers/services.js'
import { GROUP, startSentinelGroup } from '../helpers/redis-sentinel.js'

const prefix = newRedisPrefix()
// The run's Redis: REDIS_URL's, or under npm run test:sentinel the Sentinels' primary.
const redis = usingRedis ? testRedis() : undefined
const group = await startSentinelGroup()
const sentinel = redisClient({ kind: 'sentinel', sentinels: group.env.REDIS_SENTINELS.split(',').map((a) => ({ host: '127.0.0.1', port: Number(a.split(':')[1]) })), name: GROUP }, { maxRetriesPerRequest: 1 })
afterAll(async () => {
  await flushPrefix(prefix)
  redis?.disconnect()
  sentinel.disconnect()
  await group.destroy()
})

const rateStores: Array<[string, () => RateLimitStore]> = [['memory', () => new MemoryRateLimitStore()]]
const attemptStores: Array<[string, () => AttemptLogStore]> = [['memory', () => new MemoryAttemptLogStore()]]
const sequenceStores: Array<[string, () => SequenceStore]> = [['memory', () => new MemorySequenceStore()]]
const slotStores: Array<[string, () => StreamSlotStore]> = [['memory', () => new MemoryStreamSlotStore()]]
// Two instances share one in-process store as two processes share Redis.
const sharedSignals = new MemorySignalStore()
const signalStores: Array<[string, () => SignalStore]> = [['memory', () => sharedSignals]]
const idempotencyStores: Array<[string, () => IdempotencyStore]> = [['memory', () => new MemoryIdempotencyStore()]]
if (redis !== undefined) {
  idempotencyStores.push(['redis', () => new RedisIdempotencyStore(redis, prefix)])
  slotStores.push(['redis', () => new RedisStreamSlotStore(redis, prefix)])
  rateStores.push(['redis', () => new RedisRateLimitStore(redis, prefix)])
  attemptStores.push(['redis', () => new RedisAttemptLogStore(redis, prefix)])
  sequenceStores.push(['redis', () => new RedisSequenceStore(redis, prefix)])
  signalStores.push(['redis', () => new RedisSignalStore(redis, prefix)])
}
idempotencyStores.push(['sentinel', () => new RedisIdempotencyStore(sentinel, prefix)])
slotStores.push(['sentinel', () => new RedisStreamSlotStore(sentinel, prefix)])
rateStores.push(['sentinel', () => new RedisRateLimitStore(sentinel, prefix)])
attemptStores.push(['sentinel', () => new RedisAttemptLogStore(sentinel, prefix)])
sequenceStores.push(['sentinel', () => new RedisSequenceStore(sentinel, prefix)])
signalStores.push(['sentinel', () => new RedisSignalStore(sentinel, prefix)])
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(rateStores)('%s rate-limit store', (kind, make) => {
  it('fixed windows count hits per key and report the time left', async () => {
    const store = make()
    const key = `fixed-${kind}`
    const [a] = await store.hit([{ key, windowMs: 60_000 }])
    const [b, other] = await store.hit([{ key, windowMs: 60_000 }, { key: `${key}-other`, windowMs: 60_000 }])
    expect([a!.count, b!.count, other!.count]).toEqual([1, 2, 1])
    expect(b!.resetMs).toBeGreaterThan(55_000)
    expect(b!.resetMs).toBeLessThanOrEqual(60_000)
  })
})

describe.each(attemptStores)('%s attempt-log store', (kind, make) => {
  it('the attempt log slides: refused attempts do not count, old ones leave', async () => {
    const store = make()
    const log = { key: `slide-${kind}`, windowMs: 600, max: 3 }
    const allowed: boolean[] = []
    for (let i = 0; i < 3; i++) allowed.push((await store.attempt([log], `a${i}`)).allowed)
    expect(allowed).toEqual([true, true, true])
    const refused = await store.attempt([log], 'a3')
    expect(refused.allowed).toBe(false)
    expect(refused.retryMs).toBeGreaterThan(0)
    expect(refused.retryMs).toBeLessThanOrEqual(600)
    expect((await store.attempt([log], 'a4')).allowed).toBe(false) // still refused, and not logged
    await sleep(650)
    expect((await store.attempt([log], 'a5')).allowed).toBe(true) // every earlier attempt has left the window
    await store.reset(log.key)
    for (let i = 0; i < 3; i++) expect((await store.attempt([log], `b${i}`)).allowed).toBe(true)
    await store.forget(log.key, 'b1') // one attempt taken out: room for one more
    expect((await store.attempt([log], 'b3')).allowed).toBe(true)
    expect((await store.attempt([log], 'b4')).allowed).toBe(false)
  })

  it('an attempt enters every log or none: a full log refuses it for all', async () => {
    const store = make()
    const narrow = { key: `narrow-${kind}`, windowMs: 60_000, max: 2 }
    const wide = { key: `wide-${kind}`, windowMs: 60_000, max: 3 }
    const other = { key: `narrow2-${kind}`, windowMs: 60_000, max: 2 }
    expect(await store.attempt([narrow, wide], 'x1')).toEqual({ allowed: true, retryMs: 0, counts: [1, 1] })
    expect((await store.attempt([narrow, wide], 'x2')).counts).toEqual([2, 2])
    const refused = await store.attempt([narrow, wide], 'x3')
    expect(refused.allowed).toBe(false)
    expect(refused.retryMs).toBeGreaterThan(55_000)
    // The counts say which log is full (the login lock-out names the lock that refused).
    expect(refused.counts).toEqual([2, 2])
    expect(await store.attempt([other, wide], 'y1')).toEqual({ allowed: true, retryMs: 0, counts: [1, 3] }) // x3 was not logged in wide
    const y2 = await store.attempt([other, wide], 'y2') // wide is full now
    expect([y2.allowed, y2.counts]).toEqual([false, [1, 3]])
  })

  it('parallel attempts never admit more than max', async () => {
    const store = make()
    const log = { key: `par-${kind}`, windowMs: 60_000, max: 10 }
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => store.attempt([log, { ...log, key: `par-all-${kind}`, max: 100 }], `p${i}`)))
    expect(results.filter((r) => r.allowed)).toHaveLength(10)
  })

  it('fill says how full a log is and until when it refuses, logging nothing', async () => {
    const store = make()
    const log = { key: `fill-${kind}`, windowMs: 600, max: 2 }
    expect(await store.fill(log)).toEqual({ count: 0, retryMs: 0 })
    await store.attempt([log], 'f1')
    expect(await store.fill(log)).toEqual({ count: 1, retryMs: 0 })
    await store.attempt([log], 'f2')
    const full = await store.fill(log)
    expect(full.count).toBe(2)
    expect(full.retryMs).toBeGreaterThan(0)
    expect(full.retryMs).toBeLessThanOrEqual(600)
    expect((await store.fill(log)).count).toBe(2) // a fill is no attempt
    await sleep(650)
    expect(await store.fill(log)).toEqual({ count: 0, retryMs: 0 })
  })
})

describe.each(sequenceStores)('%s sequence store', (kind, make) => {
  it('is unknown until seeded, then counts on from the floor without reuse', async () => {
    const store = make()
    const key = `SEQ-${kind}`
    expect(await store.next(key)).toBeNull()
    expect(await store.seedAndNext(key, 41)).toBe(42)
    expect(await store.next(key)).toBe(43)
    // a lower floor (a stale read of the table) never moves the counter back
    expect(await store.seedAndNext(key, 5)).toBe(44)
    const drawn = await Promise.all(Array.from({ length: 50 }, () => store.next(key)))
    expect(new Set(drawn).size).toBe(50)
    expect(Math.min(...drawn as number[])).toBe(45)
  })

  it('reserves a block of consecutive numbers (an import) that no other draw shares', async () => {
    const store = make()
    const key = `SEQ-BLOCK-${kind}`
    expect(await store.next(key, 10)).toBeNull()
    expect(await store.seedAndNext(key, 100, 10)).toBe(101)
    const [block, single] = await Promise.all([store.next(key, 1000), store.next(key)])
    const first = block!
    const blockNumbers = Array.from({ length: 1000 }, (_, i) => first + i)
    expect(blockNumbers).not.toContain(single)
    expect(Math.min(first, single!)).toBe(111)
    expect(await store.next(key)).toBe(1112)
  })
})

describe.each(slotStores)('%s stream-slot store', (kind, make) => {
  it('holds at most max slots per owner; a released slot, or one whose lease ran out, frees up; taking a held slot renews it', async () => {
    const store = make()
    const owner = `owner-${kind}`
    expect(await store.acquire(owner, 'a', 2, 60_000)).toBe(true)
    expect(await store.acquire(owner, 'b', 2, 400)).toBe(true)
    expect(await store.acquire(owner, 'c', 2, 60_000)).toBe(false)
    expect(await store.acquire(`${owner}-other`, 'c', 2, 60_000)).toBe(true)
    // Renewing a held slot is not a new one.
    expect(await store.acquire(owner, 'a', 2, 60_000)).toBe(true)
    await sleep(500)
    // b's lease ran out (its instance died): its slot is free.
    expect(await store.acquire(owner, 'c', 2, 60_000)).toBe(true)
    expect(await store.acquire(owner, 'd', 2, 60_000)).toBe(false)
    await store.release(owner, 'a')
    expect(await store.acquire(owner, 'd', 2, 60_000)).toBe(true)
  })

  it('parallel takes never hold more than max', async () => {
    const store = make()
    const taken = await Promise.all(Array.from({ length: 20 }, async (_, i) => store.acquire(`parallel-${kind}`, `s${i}`, 5, 60_000)))
    expect(taken.filter(Boolean).length).toBe(5)
  })
})

describe.each(signalStores)('%s signal store', (kind, make) => {
  it('a message reaches every subscriber of its channel on every instance, the publisher\'s too, and no other channel', async () => {
    const [a, b] = [make(), make()]
    const got: string[] = []
    const channel = `canal-${kind}`
    const offA = await a.subscribe(channel, (m) => { got.push(`a:${m}`) })
    const offB = await b.subscribe(channel, (m) => { got.push(`b:${m}`) })
    await b.subscribe(`${channel}-otro`, (m) => { got.push(`otro:${m}`) })
    // The answer counts the instances that received it (records/events/feed-hub.ts stops signalling nobody).
    expect(await a.publish(channel, 'uno')).toBe(2)
    for (let i = 0; i < 200 && got.length < 2; i++) await sleep(5)
    expect(got.sort()).toEqual(['a:uno', 'b:uno'])
    offB()
    // b's last listener of the channel is gone: b is no receiver of it any more.
    for (let i = 0; i < 200 && await a.publish(channel, 'dos') !== 1; i++) await sleep(5)
    for (let i = 0; i < 200 && got.length < 3; i++) await sleep(5)
    await sleep(30)
    expect(got.filter((m) => m.endsWith('dos'))).toContain('a:dos')
    expect(got.filter((m) => m.startsWith('b:'))).toEqual(['b:uno'])
    offA()
    for (let i = 0; i < 200 && await a.publish(channel, 'tres') !== 0; i++) await sleep(5)
    expect(await a.publish(channel, 'cuatro')).toBe(0)
    // Subscribing again after the last listener left hears the channel again.
    const offAgain = await b.subscribe(channel, (m) => { got.push(`b:${m}`) })
    expect(await a.publish(channel, 'cinco')).toBe(1)
    for (let i = 0; i < 200 && !got.includes('b:cinco'); i++) await sleep(5)
    expect(got).toContain('b:cinco')
    offAgain()
    await Promise.all([a.close(), b.close()])
  })
})

describe.each(idempotencyStores)('%s idempotency store', (kind, make) => {
  it('one claim holds a key; only its token renews, answers or lets it go; an answer is replayed until it expires', async () => {
    const store = make()
    const key = `idem-${kind}`
    expect(await store.claim(key, 'a', 10_000)).toEqual({ state: 'claimed' })
    expect(await store.claim(key, 'b', 10_000)).toEqual({ state: 'running' })
    expect(await store.renew(key, 'b', 10_000)).toBe(false)
    expect(await store.renew(key, 'a', 10_000)).toBe(true)
    expect(await store.answer(key, 'b', 'otra', 10_000)).toBe(false)
    await store.release(key, 'b')
    expect(await store.claim(key, 'c', 10_000)).toEqual({ state: 'running' })
    expect(await store.answer(key, 'a', 'respuesta ñ', 300)).toBe(true)
    expect(await store.claim(key, 'd', 10_000)).toEqual({ state: 'answered', answer: 'respuesta ñ' })
    expect(await store.renew(key, 'a', 10_000)).toBe(false)
    await store.release(key, 'a')
    expect(await store.claim(key, 'd', 10_000)).toEqual({ state: 'answered', answer: 'respuesta ñ' })
    await sleep(400)
    expect(await store.claim(key, 'e', 10_000)).toEqual({ state: 'claimed' })
  })

  it('a hold let go or expired frees the key; an expired hold may still be answered by its token', async () => {
    const store = make()
    const key = `idem-free-${kind}`
    expect(await store.claim(key, 'a', 10_000)).toEqual({ state: 'claimed' })
    await store.release(key, 'a')
    expect(await store.claim(key, 'b', 100)).toEqual({ state: 'claimed' })
    await sleep(200)
    expect(await store.answer(key, 'b', 'tarde', 10_000)).toBe(true)
    expect(await store.claim(key, 'c', 10_000)).toEqual({ state: 'answered', answer: 'tarde' })
    const other = `idem-taken-${kind}`
    expect(await store.claim(other, 'a', 100)).toEqual({ state: 'claimed' })
    await sleep(200)
    expect(await store.claim(other, 'b', 10_000)).toEqual({ state: 'claimed' })
    expect(await store.answer(other, 'a', 'perdida', 10_000)).toBe(false)
  })
})
