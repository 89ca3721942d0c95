/** In-process stores for a single instance (embedded mode, no REDIS_URL). */
import type { AttemptLog, AttemptResult, CachedSession, Counter, RateLimitStore, SequenceStore, SessionFill, SessionLookup, SessionStore, UserSnapshot, Window } from './types.js'

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

/**
 * In one process nothing is lost between the database and the store, so
 * the cache is stale only when something else revoked in the database: the
 * command line (bin/users.ts) beside a single instance on PostgreSQL. The
 * store keeps the highest revocation epoch its cache reflects; an epoch
 * learnt beyond it (the periodic check, a fill, a revocation that skips
 * one) drops everything cached. The epoch also keeps a fill read before a
 * revocation from landing after it.
 */
export class MemorySessionStore implements SessionStore {
  private sessions = new ExpiringMap<CachedSession>()
  private users = new ExpiringMap<UserSnapshot>()
  /** The highest revocation epoch the cache reflects. */
  private epoch = 0

  async lookup (jti: string, userId: string): Promise<SessionLookup> {
    return { session: this.sessions.get(jti) ?? null, user: this.users.get(userId) ?? null, stamp: 0 }
  }

  async fill (epoch: number, values: SessionFill): Promise<void> {
    if (epoch < this.epoch) return // a revocation after this read was applied already
    this.noteEpoch(epoch)
    const { session, user } = values
    if (session !== undefined && this.sessions.get(session.jti) === undefined) this.sessions.set(session.jti, session.value, Math.max(session.ttlMs, 1))
    if (user !== undefined) this.users.set(user.snapshot.id, user.snapshot, user.ttlMs)
  }

  async putSession (jti: string, userId: string, ttlMs: number): Promise<void> {
    this.sessions.set(jti, { state: 'active', userId }, Math.max(ttlMs, 1))
  }

  async revokeSession (jti: string, userId: string, ttlMs: number, epoch: number): Promise<void> {
    this.applying(epoch)
    this.sessions.set(jti, { state: 'revoked', userId }, Math.max(ttlMs, 1))
  }

  async dropUser (userId: string, epoch: number): Promise<void> {
    await this.revokeUser(userId, [], epoch)
  }

  async revokeUser (userId: string, sessions: ReadonlyArray<{ jti: string, ttlMs: number }>, epoch: number): Promise<void> {
    this.applying(epoch)
    for (const s of sessions) this.sessions.set(s.jti, { state: 'revoked', userId }, Math.max(s.ttlMs, 1))
    this.users.delete(userId)
  }

  /** Revocation `epoch` is about to be applied: one skipped before it was made elsewhere. */
  private applying (epoch: number): void {
    if (epoch > this.epoch + 1) this.forgetAll()
    if (epoch > this.epoch) this.epoch = epoch
  }

  noteEpoch (epoch: number): void {
    if (epoch <= this.epoch) return
    this.forgetAll()
    this.epoch = epoch
  }

  private forgetAll (): void {
    this.sessions = new ExpiringMap<CachedSession>()
    this.users = new ExpiringMap<UserSnapshot>()
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

  private readonly logs = new Map<string, Array<{ at: number, id: string }>>()

  /** Index → the log keys written under it. */
  private readonly indexes = new Map<string, Set<string>>()

  async attempt (logs: readonly AttemptLog[], id: string, index?: string): Promise<AttemptResult> {
    const now = Date.now()
    let retryMs = 0
    const current = logs.map(({ key, windowMs, max }) => {
      const log = (this.logs.get(key) ?? []).filter((e) => e.at > now - windowMs)
      this.logs.set(key, log)
      // Room again once the entry that makes the log full has left the window.
      if (log.length >= max) retryMs = Math.max(retryMs, log[log.length - max]!.at + windowMs - now, 1)
      return log
    })
    if (retryMs > 0) return { allowed: false, retryMs, counts: current.map((log) => log.length) }
    for (const log of current) log.push({ at: now, id })
    if (index !== undefined) {
      const keys = this.indexes.get(index) ?? new Set<string>()
      for (const { key } of logs) keys.add(key)
      this.indexes.set(index, keys)
    }
    return { allowed: true, retryMs: 0, counts: current.map((log) => log.length) }
  }

  async forget (key: string, id: string): Promise<void> {
    const log = this.logs.get(key)
    if (log !== undefined) this.logs.set(key, log.filter((e) => e.id !== id))
  }

  async reset (key: string): Promise<void> {
    this.windows.delete(key)
    this.logs.delete(key)
  }

  async clear (index: string, keys: readonly string[]): Promise<number> {
    let cleared = 0
    for (const key of new Set([...(this.indexes.get(index) ?? []), ...keys])) {
      if ((this.logs.get(key)?.length ?? 0) > 0) cleared++
      this.logs.delete(key)
    }
    this.indexes.delete(index)
    return cleared
  }
}
