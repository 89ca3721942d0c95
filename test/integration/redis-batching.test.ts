/**
 * The Redis stores run the calls of one turn of the event loop as one
 * script (core/coalesce.ts; docs/performance.md "One Redis script per turn"),
 * with the answers the same calls get one after another. On a redis-server
 * of this file's own, so that INFO commandstats counts this file's commands only.
 */
import { describe, expect, it } from 'vitest'
import type { Counter, Window } from '../../stores/rate-limits/contract.js'
import { RedisRateLimitStore } from '../../stores/rate-limits/redis.js'
import { RedisSequenceStore } from '../../stores/sequences/redis.js'
import { commandCalls, usePrivateRedis } from '../helpers/redis-server.js'

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

    it('a hit whose key fails in the script rejects its own caller only: its turn-mates are counted and answered', async () => {
      const store = new RedisRateLimitStore(redis.client, p)
      await redis.client.lpush(`${p}rl:wrongtype`, 'x') // INCR on a list fails
      await redis.client.lpush(`${p}wrongread`, 'x') // GET on a list fails
      const results = await Promise.allSettled([
        store.hit([{ key: 'fine-1', windowMs: 60_000 }]),
        store.hit([{ key: 'wrongtype', windowMs: 60_000 }]),
        store.hitAndRead([{ key: 'fine-2', windowMs: 60_000 }], [`${p}wrongread`]),
        store.hitAndRead([{ key: 'fine-1', windowMs: 60_000 }, { key: 'fine-2', windowMs: 60_000 }], []),
      ])
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled'])
      for (const r of [results[1], results[2]]) expect(String((r as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/)
      expect((results[0] as PromiseFulfilledResult<Counter[]>).value.map((c) => c.count)).toEqual([1])
      // The third's window was counted before its read failed (Redis does not roll a script back).
      expect((results[3] as PromiseFulfilledResult<{ counters: Counter[] }>).value.counters.map((c) => c.count)).toEqual([2, 2])
      expect((await store.hit([{ key: 'fine-3', windowMs: 60_000 }]))[0]!.count).toBe(1)
    })
  })

  describe('sequences', () => {
    /** Draws in call order: [key, count]. */
    const draws: Array<[string, number]> = [['A', 1], ['B', 3], ['A', 5], ['A', 1], ['UNSEEDED', 1], ['B', 1], ['A', 2]]
    /** Counters another instance draws too: never leased (stores/sequences/leases.ts), every draw goes to Redis. */
    const sharedWithOthers = async (...keys: string[]): Promise<void> => {
      for (const key of keys) await redis.client.set(`${p}seq:${key}:shared`, 'another-instance', 'PX', 60_000)
    }

    it('draws issued in one turn get exactly the numbers the same draws get one after another: consecutive, distinct, in call order', async () => {
      const store = new RedisSequenceStore(redis.client, p)
      await sharedWithOthers('seq-A', 'seq-B', 'con-A', 'con-B')
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
      await sharedWithOthers('gone', 'back-seq', 'back-con', 'kept')
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
      await sharedWithOthers('race')
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
      await sharedWithOthers('one-A', 'one-B')
      for (const key of ['one-A', 'one-B']) await store.seedAndNext(key, 0)
      await store.next('one-A') // the script is loaded
      const calls = await commandsOf(async () => Promise.all(draws.map(async ([key, count]) => store.next(`one-${key}`, count))))
      expect(calls.evalsha).toBe(1)
      expect(calls.incrby).toBe(2)
    })

    it('a key that fails in the script rejects the draws of that key only', async () => {
      const store = new RedisSequenceStore(redis.client, p)
      await sharedWithOthers('fine', 'broken')
      for (const key of ['fine', 'broken']) await store.seedAndNext(key, 0)
      await redis.client.set(`${p}seq:broken`, 'not a number') // INCRBY fails
      const results = await Promise.allSettled([store.next('fine'), store.next('broken'), store.next('fine'), store.next('broken', 2)])
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected'])
      expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual([2, 3])
      for (const r of [results[1], results[3]]) expect(String((r as PromiseRejectedResult).reason)).toMatch(/not an integer/)
      expect(await store.next('fine')).toBe(4)
    })
  })
})
