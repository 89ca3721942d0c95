/** In-process stores for a single instance (embedded mode, no REDIS_URL). */
import type { Counter, RateLimitStore, SequenceStore, SessionLookup, SessionState, SessionStore, UserSnapshot, Window } from './types.js'

/** A Map whose entries expire; expired entries are dropped when read or swept. */
class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V, expires: number }>()

  get (key: string): V | undefined {
    const e = this.entries.get(key)
    if (e === undefined) return undefined
    if (e.expires <= Date.now()) { this.entries.delete(key); return undefined }
    return e.value
  }

  set (key: string, value: V, ttlMs: number): void {
    if (this.entries.size > 100_000) this.sweep()
    this.entries.set(key, { value, expires: Date.now() + ttlMs })
  }

  delete (key: string): void { this.entries.delete(key) }

  private sweep (): void {
    const now = Date.now()
    for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k)
  }
}

export class MemorySequenceStore implements SequenceStore {
  private readonly counters = new Map<string, number>()

  async next (key: string): Promise<number | null> {
    const cur = this.counters.get(key)
    if (cur === undefined) return null
    this.counters.set(key, cur + 1)
    return cur + 1
  }

  async seedAndNext (key: string, floor: number): Promise<number> {
    const cur = Math.max(this.counters.get(key) ?? 0, floor) + 1
    this.counters.set(key, cur)
    return cur
  }
}

export class MemorySessionStore implements SessionStore {
  private readonly sessions = new ExpiringMap<SessionState>()
  private readonly users = new ExpiringMap<UserSnapshot>()
  private readonly gens = new Map<string, number>()

  async lookup (jti: string, userId: string): Promise<SessionLookup> {
    return { session: this.sessions.get(jti) ?? null, user: this.users.get(userId) ?? null, userGen: String(this.gens.get(userId) ?? 0) }
  }

  async fillSession (jti: string, state: SessionState, ttlMs: number): Promise<void> {
    if (this.sessions.get(jti) === undefined) this.sessions.set(jti, state, Math.max(ttlMs, 1))
  }

  async putSession (jti: string, state: SessionState, ttlMs: number): Promise<void> {
    this.sessions.set(jti, state, Math.max(ttlMs, 1))
  }

  async putUser (user: UserSnapshot, ttlMs: number, gen: string): Promise<void> {
    if (String(this.gens.get(user.id) ?? 0) === gen) this.users.set(user.id, user, ttlMs)
  }

  async dropUser (userId: string): Promise<void> {
    this.gens.set(userId, (this.gens.get(userId) ?? 0) + 1)
    this.users.delete(userId)
  }
}

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

  private readonly logs = new Map<string, number[]>()

  async attempt (key: string, windowMs: number, max: number): Promise<Counter> {
    const now = Date.now()
    const log = (this.logs.get(key) ?? []).filter((t) => t > now - windowMs)
    if (log.length >= max) {
      this.logs.set(key, log)
      return { count: log.length + 1, resetMs: log[0]! + windowMs - now }
    }
    log.push(now)
    this.logs.set(key, log)
    return { count: log.length, resetMs: windowMs }
  }

  async reset (key: string): Promise<void> {
    this.windows.delete(key)
    this.logs.delete(key)
  }
}
