/**
 * The store contracts, run against both implementations: in-process always,
 * Redis when REDIS_URL is set (a real server, under this file's prefix).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { MemoryRateLimitStore, MemorySequenceStore } from '../../stores/memory-stores.js'
import { RedisRateLimitStore, RedisSequenceStore } from '../../stores/redis-stores.js'
import type { RateLimitStore, SequenceStore } from '../../stores/types.js'
import { flushPrefix, newRedisPrefix, usingRedis } from '../helpers/services.js'

const prefix = newRedisPrefix()
const redis = usingRedis ? new Redis(process.env.REDIS_URL!) : undefined
afterAll(async () => {
  await flushPrefix(prefix)
  redis?.disconnect()
})

const rateStores: Array<[string, () => RateLimitStore]> = [['memory', () => new MemoryRateLimitStore()]]
const sequenceStores: Array<[string, () => SequenceStore]> = [['memory', () => new MemorySequenceStore()]]
if (redis !== undefined) {
  rateStores.push(['redis', () => new RedisRateLimitStore(redis, prefix)])
  sequenceStores.push(['redis', () => new RedisSequenceStore(redis, prefix)])
}
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

  it('the attempt log slides: refused attempts do not count, old ones leave', async () => {
    const store = make()
    const key = `slide-${kind}`
    const counts: number[] = []
    for (let i = 0; i < 3; i++) counts.push((await store.attempt(key, 600, 3)).count)
    expect(counts).toEqual([1, 2, 3])
    const refused = await store.attempt(key, 600, 3)
    expect(refused.count).toBe(4)
    expect(refused.resetMs).toBeGreaterThan(0)
    expect(refused.resetMs).toBeLessThanOrEqual(600)
    expect((await store.attempt(key, 600, 3)).count).toBe(4) // still refused, and not logged
    await sleep(650)
    expect((await store.attempt(key, 600, 3)).count).toBe(1) // every earlier attempt has left the window
    await store.reset(key)
    expect((await store.attempt(key, 600, 3)).count).toBe(1)
  })

  it('parallel attempts never admit more than max', async () => {
    const store = make()
    const results = await Promise.all(Array.from({ length: 25 }, () => store.attempt(`par-${kind}`, 60_000, 10)))
    expect(results.filter((r) => r.count <= 10)).toHaveLength(10)
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
})
