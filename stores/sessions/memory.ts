/** The session cache in process (one instance, embedded mode, no REDIS_URL). */
import type { CachedSession, SessionFill, SessionLookup, SessionStore, UserSnapshot } from './contract.js'

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
