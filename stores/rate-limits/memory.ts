/** Rate-limit windows in process (one instance, embedded mode; and each instance's own /docs and /ready windows, plugins/auth.ts). */
import type { Counter, RateLimitStore, Window } from './contract.js'

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number, resetAt: number }>()

  async hit (windows: readonly Window[]): Promise<Counter[]> {
    const now = Date.now()
    if (this.windows.size > 100_000) {
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k)
    }
    return windows.map(({ key, windowMs }) => {
      let w = this.windows.get(key)
      if (w === undefined || w.resetAt <= now) {
        w = { count: 0, resetAt: now + windowMs }
        this.windows.set(key, w)
      }
      w.count++
      return { count: w.count, resetMs: w.resetAt - now }
    })
  }
}
