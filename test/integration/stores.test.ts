/**
 * The store contracts, run against both implementations: in-process always,
 * Redis when REDIS_URL is set (a real server, under this file's prefix).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import type { AttemptLogStore } from '../../stores/attempt-logs/contract.js'
import { MemoryAttemptLogStore } from '../../stores/attempt-logs/memory.js'
import { RedisAttemptLogStore } from '../../stores/attempt-logs/redis.js'
import type { RateLimitStore, Window } from '../../stores/rate-limits/contract.js'
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
import { commandCalls, usePrivateRedis } from '../helpers/redis-server.js'
import { flushPrefix, newRedisPrefix, usingRedis } from '../helpers/services.js'

const prefix = newRedisPrefix()
const redis = usingRedis ? new Redis(process.env.REDIS_URL!) : undefined
afterAll(async () => {
  await flushPrefix(prefix)
  redis?.disconnect()
})

const rateStores: Array<[string, () => RateLimitStore]> = [['memory', () => new MemoryRateLimitStore()]]
const attemptStores: Array<[string, () => AttemptLogStore]> = [['memory', () => new MemoryAttemptLogStore()]]
const sequenceStores: Array<[string, () => SequenceStore]> = [['memory', () => new MemorySequenceStore()]]
const slotStores: Array<[string, () => StreamSlotStore]> = [['memory', () => new MemoryStreamSlotStore()]]
// Two instances share one in-process store as two processes share Redis.
const sharedSignals = new MemorySignalStore()
const signalStores: Array<[string, () => SignalStore]> = [['memory', () => sharedSignals]]
if (redis !== undefined) {
  slotStores.push(['redis', () => new RedisStreamSlotStore(redis, prefix)])
  rateStores.push(['redis', () => new RedisRateLimitStore(redis, prefix)])
  attemptStores.push(['redis', () => new RedisAttemptLogStore(redis, prefix)])
  sequenceStores.push(['redis', () => new RedisSequenceStore(redis, prefix)])
  signalStores.push(['redis', () => new RedisSignalStore(redis, prefix)])
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
    a.publish(channel, 'uno')
    for (let i = 0; i < 200 && got.length < 2; i++) await sleep(5)
    expect(got.sort()).toEqual(['a:uno', 'b:uno'])
    offB()
    a.publish(channel, 'dos')
    for (let i = 0; i < 200 && got.length < 3; i++) await sleep(5)
    await sleep(30)
    expect(got.filter((m) => m.endsWith('dos'))).toEqual(['a:dos'])
    offA()
    await Promise.all([a.close(), b.close()])
  })
})

/**
 * The Redis stores run the calls of one turn of the event loop as one
 * script (stores/coalesce.ts): on a redis-server of this file's own, so
 * that INFO commandstats counts this file's commands only.
 */
describe('Redis stores: the calls of one turn share one script run', () => {
  const redis = usePrivateRedis()
  const p = 'batch:'

  /** Starts counting afresh: the calls of `what` by command name (INFO commandstats, scripts' inner commands included). */
  async function commandsOf (what: () => Promise<unknown>): Promise<Record<string, number>> {
    await redis.client.config('RESETSTAT')
    await what()
    return commandCalls(await redis.client.info('commandstats'))
  }

  describe('rate limits', () => {
    const plan = (tag: string): Array<{ windows: Window[], keys: string[] }> => {
      const ip = { key: `${tag}:ip`, windowMs: 60_000 }
      const tok = { key: `${tag}:tok`, windowMs: 30_000 }
      const other = { key: `${tag}:other`, windowMs: 10_000 }
      // The read keys hold values per tag (set below), one missing.
      const read = (k: string): string => `${p}${tag}:val:${k}`
      return [
        { windows: [ip], keys: [] },
        { windows: [ip, tok], keys: [read('a'), read('b')] },
        { windows: [other], keys: [read('missing')] },
        { windows: [], keys: [read('b')] },
        { windows: [ip, tok, other], keys: [] },
        { windows: [tok], keys: [read('a')] },
        { windows: [ip], keys: [] },
      ]
    }
    async function prepare (tag: string): Promise<void> {
      await redis.client.set(`${p}${tag}:val:a`, `A-${tag}`)
      await redis.client.set(`${p}${tag}:val:b`, `B-${tag}`)
      // A window left without an expiry (written by hand, an old version): the first hit gives it one.
      await redis.client.set(`${p}rl:${tag}:other`, '5')
    }

    it('hits issued in one turn count, expire and read exactly as the same hits one after another', async () => {
      const store = new RedisRateLimitStore(redis.client, p)
      await prepare('seq')
      await prepare('con')
      const sequential: Array<Awaited<ReturnType<RedisRateLimitStore['hitAndRead']>>> = []
      for (const r of plan('seq')) sequential.push(await store.hitAndRead(r.windows, r.keys))
      const concurrent = await Promise.all(plan('con').map(async (r) => store.hitAndRead(r.windows, r.keys)))

      const counts = (rs: typeof sequential): number[][] => rs.map((r) => r.counters.map((c) => c.count))
      expect(counts(concurrent)).toEqual(counts(sequential))
      expect(counts(concurrent)).toEqual([[1], [2, 1], [6], [], [3, 2, 7], [3], [4]])
      expect(concurrent.map((r) => r.values)).toEqual(sequential.map((r) => r.values.map((v) => v?.replace('-seq', '-con') ?? null)))
      expect(concurrent.map((r) => r.values)).toEqual([[], ['A-con', 'B-con'], [null], ['B-con'], [], ['A-con'], []])
      // Each counter's time left is its own window's (60, 30 or 10 s), as when sent alone.
      const plans = plan('con')
      concurrent.forEach((r, i) => {
        r.counters.forEach((c, j) => {
          const windowMs = plans[i]!.windows[j]!.windowMs
          expect(c.resetMs).toBeLessThanOrEqual(windowMs)
          expect(c.resetMs).toBeGreaterThan(windowMs - 5_000)
        })
      })
      for (const key of ['ip', 'tok', 'other']) expect(await redis.client.pttl(`${p}rl:con:${key}`)).toBeGreaterThan(0)
      expect(await store.hit([{ key: 'con:ip', windowMs: 60_000 }])).toMatchObject([{ count: 5 }])
    })

    it('sends the hits of one turn as one script: one EVALSHA, one INCR per window', async () => {
      const store = new RedisRateLimitStore(redis.client, p)
      await store.hit([{ key: 'warm', windowMs: 60_000 }]) // the script is loaded
      const calls = await commandsOf(async () => Promise.all(Array.from({ length: 7 }, async (_, i) => store.hitAndRead([{ key: 'seven:ip', windowMs: 60_000 }, { key: `seven:${i}`, windowMs: 60_000 }], [`${p}nothing`]))))
      expect(calls.evalsha).toBe(1)
      expect(calls.incr).toBe(14)
      expect(calls.get).toBe(7)
    })

    it('a batch whose script fails rejects every caller of it, and the next batch works', async () => {
      const store = new RedisRateLimitStore(redis.client, p)
      await redis.client.lpush(`${p}rl:wrongtype`, 'x') // INCR on a list fails
      const results = await Promise.allSettled([
        store.hit([{ key: 'fine-1', windowMs: 60_000 }]),
        store.hit([{ key: 'wrongtype', windowMs: 60_000 }]),
        store.hitAndRead([{ key: 'fine-2', windowMs: 60_000 }], []),
      ])
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
      for (const r of results) expect(String((r as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/)
      expect((await store.hit([{ key: 'fine-3', windowMs: 60_000 }]))[0]!.count).toBe(1)
    })
  })

  describe('sequences', () => {
    /** Draws in call order: [key, count]. */
    const draws: Array<[string, number]> = [['A', 1], ['B', 3], ['A', 5], ['A', 1], ['UNSEEDED', 1], ['B', 1], ['A', 2]]

    it('draws issued in one turn get exactly the numbers the same draws get one after another: consecutive, distinct, in call order', async () => {
      const store = new RedisSequenceStore(redis.client, p)
      for (const tag of ['seq', 'con']) for (const key of ['A', 'B']) expect(await store.seedAndNext(`${tag}-${key}`, 100)).toBe(101)
      const sequential: Array<number | null> = []
      for (const [key, count] of draws) sequential.push(await store.next(`seq-${key}`, count))
      const concurrent = await Promise.all(draws.map(async ([key, count]) => store.next(`con-${key}`, count)))
      expect(concurrent).toEqual(sequential)
      // A: 102, 103–107, 108, 109–110; B: 102–104, 105.
      expect(concurrent).toEqual([102, 102, 103, 108, null, 105, 109])
      expect(await store.next('con-A')).toBe(111)
      expect(await store.next('con-B')).toBe(106)
    })

    it('a key gone from Redis answers null to every draw of it in the batch; a counter gone back answers null to the draws at or below what was drawn, as one after another', async () => {
      const store = new RedisSequenceStore(redis.client, p)
      for (const key of ['gone', 'back-seq', 'back-con', 'kept']) await store.seedAndNext(key, 10)
      await redis.client.del(`${p}seq:gone`)
      expect(await Promise.all([store.next('gone'), store.next('kept'), store.next('gone', 4), store.next('kept')])).toEqual([null, 12, null, 13])

      // Redis went back 3 numbers without a reconnection (drawn: 11).
      for (const tag of ['seq', 'con']) await redis.client.set(`${p}seq:back-${tag}`, '8')
      const sequential: Array<number | null> = []
      for (let i = 0; i < 5; i++) sequential.push(await store.next('back-seq'))
      const concurrent = await Promise.all(Array.from({ length: 5 }, async () => store.next('back-con')))
      expect(concurrent).toEqual(sequential)
      expect(concurrent).toEqual([null, null, null, 12, 13])
    })

    it('a seed answered right after a batch does not make the batch\'s numbers look gone back (no gap without a failure)', async () => {
      const store = new RedisSequenceStore(redis.client, p)
      expect(await store.seedAndNext('race', 0)).toBe(1)
      // The batch leaves in the turn's setImmediate; the seed is sent right after it, in the same write.
      const a = store.next('race')
      const b = store.next('race')
      const c = new Promise<number>((resolve, reject) => { setImmediate(() => { store.seedAndNext('race', 0).then(resolve, reject) }) })
      expect(await Promise.all([a, b, c])).toEqual([2, 3, 4])
      expect(await store.next('race')).toBe(5)
    })

    it('sends the draws of one turn as one script: one EVALSHA, one INCRBY per key', async () => {
      const store = new RedisSequenceStore(redis.client, p)
      for (const key of ['one-A', 'one-B']) await store.seedAndNext(key, 0)
      await store.next('one-A') // the script is loaded
      const calls = await commandsOf(async () => Promise.all(draws.map(async ([key, count]) => store.next(`one-${key}`, count))))
      expect(calls.evalsha).toBe(1)
      expect(calls.incrby).toBe(2)
    })

    it('a batch whose script fails rejects every caller of it', async () => {
      const store = new RedisSequenceStore(redis.client, p)
      for (const key of ['fine', 'broken']) await store.seedAndNext(key, 0)
      await redis.client.set(`${p}seq:broken`, 'not a number') // INCRBY fails
      const results = await Promise.allSettled([store.next('fine'), store.next('broken'), store.next('fine')])
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
      // A script that fails keeps what it did before (Redis does not roll it back):
      // the batch's 2 and 3 of `fine` were drawn and are never handed out (a gap, as any failed create leaves).
      expect(await store.next('fine')).toBe(4)
    })
  })
})
