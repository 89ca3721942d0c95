/**
 * The contracts of the shared state that makes many instances act as one.
 * Each has an in-process implementation (memory-*.ts, one instance, embedded
 * mode) and a Redis one (redis-*.ts, atomic Lua, keys under a namespace).
 */

/**
 * Per prefix-and-year id counters (docs/operator-guide.md "Ids and a Redis restore"). The database holds every
 * id that was stored; a counter is trusted only while it cannot be behind it.
 */
export interface SequenceStore {
  /**
   * The next number of `key`, or null when the counter is unknown (new,
   * flushed) or may be behind (Redis reconnected since this instance last
   * seeded it, or answered a number this instance already drew): then seed it.
   */
  next (key: string): Promise<number | null>
  /**
   * Raises the counter to at least `floor` (the highest stored number) and
   * to every number this instance drew, and returns the next.
   */
  seedAndNext (key: string, floor: number): Promise<number>
}

/** What a request needs to know about its caller, cached across instances. */
export interface UserSnapshot {
  readonly id: string
  readonly username: string
  readonly nombre: string
  readonly rol: string
  readonly activo: boolean
  /** Linked staff record (`usuarios.personal_id`), or null: decides row-level scope (docs/user-guide.md "Authentication and roles"). */
  readonly personalId: string | null
}

export type SessionState = 'active' | 'revoked'

/** A session as cached: its state and the user it was issued to (a token naming another user is refused). */
export interface CachedSession {
  readonly state: SessionState
  readonly userId: string
}

export interface SessionLookup {
  /** null: the store does not know, or its cache may be stale: ask the database. */
  readonly session: CachedSession | null
  /** null: as for `session`. */
  readonly user: UserSnapshot | null
  /** Opaque stamp of the cache connection the lookup saw; handed back to `fill`. */
  readonly stamp: number
}

/** What the database said, to be cached: read at revocation epoch `epoch` or later. */
export interface SessionFill {
  readonly session?: { readonly jti: string, readonly value: CachedSession, readonly ttlMs: number }
  readonly user?: { readonly snapshot: UserSnapshot, readonly ttlMs: number }
}

/**
 * Token sessions and the user cache (docs/operator-guide.md "Sessions and a Redis restore"). One lookup per request
 * answers both in a single round trip. The database stays the authority:
 * it numbers every revocation (db/revocation-epoch.ts); the cache holds only
 * what the database confirmed, keeps the epoch it has caught up with, and a
 * cache behind the database (a Redis restored from a snapshot, a lagging
 * replica, a lost write) is dropped as a whole.
 */
export interface SessionStore {
  lookup (jti: string, userId: string): Promise<SessionLookup>
  /**
   * Caches what the database answered on a miss. `epoch` was read before
   * (or with) the rows, so they reflect every revocation up to it. Nothing
   * is cached when a later revocation already reached the cache; a cache
   * found behind `epoch` is dropped first. `stamp` is the lookup's.
   */
  fill (epoch: number, values: SessionFill, stamp: number): Promise<void>
  /** A session just issued (login). */
  putSession (jti: string, userId: string, ttlMs: number): Promise<void>
  /** After the database committed revocation `epoch` of this session (logout). */
  revokeSession (jti: string, userId: string, ttlMs: number, epoch: number): Promise<void>
  /** After the database committed revocation `epoch`, a write to this user: forget its snapshot. */
  dropUser (userId: string, epoch: number): Promise<void>
  /**
   * After the database committed revocation `epoch`, which revoked these
   * sessions of the user (docs/user-guide.md "Accounts and sessions"): marks each revoked and forgets the
   * user's snapshot; the cache's epoch moves once, after the last.
   */
  revokeUser (userId: string, sessions: ReadonlyArray<{ readonly jti: string, readonly ttlMs: number }>, epoch: number): Promise<void>
  /** The database's epoch as this instance learnt it (start-up, periodic check): a cache behind it is stale. */
  noteEpoch (epoch: number): void
}

/** A fixed-window counter after one more hit. */
export interface Counter {
  readonly count: number
  /** Milliseconds until the window ends and the count starts again. */
  readonly resetMs: number
}

export interface Window {
  readonly key: string
  readonly windowMs: number
}

/** A sliding log of attempts (login lock-out): at most `max` within any `windowMs`. */
export interface AttemptLog {
  readonly key: string
  readonly windowMs: number
  readonly max: number
}

export interface AttemptResult {
  /** false: a log already held `max` attempts in its window, and this attempt was logged nowhere. */
  readonly allowed: boolean
  /** When refused: milliseconds until every full log has room again. */
  readonly retryMs: number
  /** Attempts in each log (in order) within its window: after this one when allowed, as found when refused. */
  readonly counts: readonly number[]
}

/** Request counters shared by all instances (docs/user-guide.md "Rate limits") and the login lock-out (same section). */
export interface RateLimitStore {
  /** Counts one hit against each window and returns the counts, in order. */
  hit (windows: readonly Window[]): Promise<Counter[]>
  /**
   * Logs attempt `id` in every log, atomically, unless one of them is
   * full (then in none): parallel attempts can never get past a limit.
   * `index` names a set that remembers the keys of the logs written, so
   * all of them can be cleared together (`clear`).
   */
  attempt (logs: readonly AttemptLog[], id: string, index?: string): Promise<AttemptResult>
  /** Takes attempt `id` out of one log (a login that succeeded was no failure). */
  forget (key: string, id: string): Promise<void>
  /** Forgets a window or attempt log. */
  reset (key: string): Promise<void>
  /**
   * Forgets, atomically, every log `attempt` recorded in `index`, the
   * logs `keys`, and the index itself (unlocking a username on every
   * address, docs/user-guide.md "Accounts and sessions"). Returns how many logs held attempts.
   */
  clear (index: string, keys: readonly string[]): Promise<number>
}
