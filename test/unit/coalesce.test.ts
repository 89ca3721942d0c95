/**
 * core/coalesce.ts: the calls of one turn of the event loop go to one
 * `run`, in call order; each caller gets its own output, or the batch's
 * error; with `inFlight`, calls made while that many runs go wait for one
 * to end, or for `maxWaitMs`, and go together. What is built on it is tested against a real Redis and database:
 * test/integration/redis-batching.test.ts and admission.test.ts (the Redis
 * stores), create-batch.test.ts and read-batch.test.ts (db/).
 */
import { describe, expect, it } from 'vitest'
import { Coalescer } from '../../core/coalesce.js'

/** A coalescer whose run doubles its inputs and records each batch it got. */
function doubling (max?: number): { c: Coalescer<number, number>, batches: number[][] } {
  const batches: number[][] = []
  const c = new Coalescer<number, number>(async (inputs) => {
    batches.push([...inputs])
    return inputs.map((x) => 2 * x)
  }, max)
  return { c, batches }
}

const nextTurn = async (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('Coalescer', () => {
  it('runs the calls of one turn as one batch, in call order, each caller getting its own output', async () => {
    const { c, batches } = doubling()
    const out = await Promise.all([1, 2, 3, 4, 5].map(async (x) => c.call(x)))
    expect(out).toEqual([2, 4, 6, 8, 10])
    expect(batches).toEqual([[1, 2, 3, 4, 5]])
  })

  it('takes calls made in the same turn after an await (microtasks) into the batch, and later turns into batches of their own', async () => {
    const { c, batches } = doubling()
    const first = c.call(1)
    const second = Promise.resolve().then(async () => c.call(2))
    expect(await Promise.all([first, second])).toEqual([2, 4])
    expect(await c.call(3)).toBe(6)
    await nextTurn()
    expect(await Promise.all([c.call(4), c.call(5)])).toEqual([8, 10])
    expect(batches).toEqual([[1, 2], [3], [4, 5]])
  })

  it('rejects every caller of a batch whose run fails, with its error, and goes on with the next batch', async () => {
    let fail = true
    const c = new Coalescer<number, number>(async (inputs) => {
      if (fail) throw new Error('redis down')
      return inputs
    })
    const results = await Promise.allSettled([c.call(1), c.call(2), c.call(3)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(results.map((r) => (r as PromiseRejectedResult).reason.message)).toEqual(['redis down', 'redis down', 'redis down'])
    fail = false
    expect(await Promise.all([c.call(4), c.call(5)])).toEqual([4, 5])
  })

  it('rejects every caller when run throws before returning a promise, or answers the wrong number of outputs', async () => {
    const throwing = new Coalescer<number, number>(() => { throw new Error('bad input') })
    expect((await Promise.allSettled([throwing.call(1), throwing.call(2)])).map((r) => r.status)).toEqual(['rejected', 'rejected'])
    const short = new Coalescer<number, number>(async (inputs) => inputs.slice(1))
    const results = await Promise.allSettled([short.call(1), short.call(2)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/batch of 2 calls was answered with 1 outputs/)
  })

  it('with inFlight, runs no more batches at once; calls made meanwhile wait and go together in the turn after one ends', async () => {
    const batches: number[][] = []
    let running = 0
    let most = 0
    const ends: Array<() => void> = []
    const c = new Coalescer<number, number>(async (inputs) => {
      batches.push([...inputs])
      most = Math.max(most, ++running)
      await new Promise<void>((resolve) => ends.push(resolve))
      running--
      return inputs.map((x) => 2 * x)
    }, 3, 2)
    const first = [c.call(1), c.call(2), c.call(3), c.call(4)]
    await nextTurn()
    expect(batches).toEqual([[1, 2, 3], [4]]) // two slices of at most 3, both running
    const later = [5, 6, 7, 8, 9].map(async (x) => c.call(x))
    await nextTurn()
    await nextTurn()
    expect(batches).toHaveLength(2) // both running: 5…9 wait
    ends.shift()!()
    expect(await Promise.all(first.slice(0, 3))).toEqual([2, 4, 6])
    await nextTurn()
    await nextTurn()
    expect(batches).toEqual([[1, 2, 3], [4], [5, 6, 7]]) // one ended: one slice more
    ends.shift()!()
    expect(await first[3]).toBe(8)
    await nextTurn()
    await nextTurn()
    expect(batches).toEqual([[1, 2, 3], [4], [5, 6, 7], [8, 9]])
    ends.shift()!()
    ends.shift()!()
    expect(await Promise.all(later)).toEqual([10, 12, 14, 16, 18])
    expect(most).toBe(2)
  })

  it('with inFlight, calls that waited maxWaitMs for a batch that does not end go anyway', async () => {
    const batches: number[][] = []
    const c = new Coalescer<number, number>(async (inputs) => {
      batches.push([...inputs])
      if (inputs[0] === 1) await new Promise<never>(() => undefined) // hangs, as a statement on a stalled database
      return inputs
    }, 16, 1, 50)
    void c.call(1)
    await nextTurn()
    const later = [c.call(2), c.call(3)]
    await nextTurn()
    await nextTurn()
    expect(batches).toEqual([[1]]) // waiting for the first
    expect(await Promise.all(later)).toEqual([2, 3])
    expect(batches).toEqual([[1], [2, 3]])
  })

  it('runs a turn of more than max calls in slices of max, in order', async () => {
    const { c, batches } = doubling(2)
    expect(await Promise.all([1, 2, 3, 4, 5].map(async (x) => c.call(x)))).toEqual([2, 4, 6, 8, 10])
    expect(batches).toEqual([[1, 2], [3, 4], [5]])
  })
})
