/**
 * When hits counted ahead of Redis become pressing
 * (stores/rate-limits/local-counts.ts): a window holding a two-hundredth
 * of its limit unsent asks for a flush now; a large limit lets the hits
 * wait for the lazy flush (stores/admission.ts).
 */
import { describe, expect, it } from 'vitest'
import { LocalCounts } from '../../stores/rate-limits/local-counts.js'

const HOUR = 3_600_000

function known (max: number): { counts: LocalCounts, window: { key: string, windowMs: number, max: number } } {
  const counts = new LocalCounts()
  const window = { key: 'tok:a', windowMs: HOUR, max }
  counts.learn([window], [{ count: 1, resetMs: HOUR }], Date.now())
  return { counts, window }
}

describe('a window counted ahead of Redis', () => {
  it('is pressing once a two-hundredth of its limit is unsent, and no longer once taken', () => {
    const { counts, window } = known(1000)
    for (let i = 0; i < 4; i++) {
      expect(counts.tryHit([window], Date.now())).toBeDefined()
      expect(counts.pressing).toBe(false)
    }
    expect(counts.tryHit([window], Date.now())).toBeDefined()
    expect(counts.pressing).toBe(true)
    expect(counts.take()).toEqual([{ key: 'tok:a', windowMs: HOUR, n: 5 }])
    expect(counts.pressing).toBe(false)
  })

  it('with a large limit, leaves a thousand hits to the lazy flush', () => {
    const { counts, window } = known(1_000_000)
    for (let i = 0; i < 1000; i++) expect(counts.tryHit([window], Date.now())).toBeDefined()
    expect(counts.pressing).toBe(false)
    expect(counts.take()).toEqual([{ key: 'tok:a', windowMs: HOUR, n: 1000 }])
  })

  it('is pressing at every hit when a two-hundredth of the limit is under one', () => {
    const { counts, window } = known(100)
    expect(counts.tryHit([window], Date.now())).toBeDefined()
    expect(counts.pressing).toBe(true)
  })
})
