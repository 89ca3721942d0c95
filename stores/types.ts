/**
 * The contracts of the shared state that makes many instances act as one.
 * Each has an in-process implementation (memory-*.ts, one instance, embedded
 * mode) and a Redis one (redis-*.ts, atomic Lua, keys under a namespace).
 */

/** Per prefix-and-year id counters (SPEC S2). */
export interface SequenceStore {
  /** The next number of `key`, or null when the counter is unknown (flushed, new). */
  next (key: string): Promise<number | null>
  /** Raises the counter to at least `floor` (the highest stored number) and returns the next. */
  seedAndNext (key: string, floor: number): Promise<number>
}

/** What a request needs to know about its caller, cached across instances. */
export interface UserSnapshot {
  readonly id: string
  readonly username: string
  readonly nombre: string
  readonly rol: string
  readonly activo: boolean
  /** Linked staff record (`usuarios.personal_id`), or null: decides row-level scope (SPEC S11). */
  readonly personalId: string | null
}

export type SessionState = 'active' | 'revoked'

export interface SessionLookup {
  /** null: the store does not know (never seen, or Redis lost it): ask the database. */
  readonly session: SessionState | null
  readonly user: UserSnapshot | null
  /** Generation of the user's cache entry; a fill read under an older generation is dropped. */
  readonly userGen: string
}

/**
 * Token sessions and the user cache. One lookup per request answers both in
 * a single round trip. The database stays the source of truth: a miss is
 * answered from it and written back here.
 */
export interface SessionStore {
  lookup (jti: string, userId: string): Promise<SessionLookup>
  putSession (jti: string, state: SessionState, ttlMs: number): Promise<void>
  /** Like putSession but never replaces a state already stored (a fill from the database). */
  fillSession (jti: string, state: SessionState, ttlMs: number): Promise<void>
  /** Caches the snapshot only if no write to the user happened since `gen` was read. */
  putUser (user: UserSnapshot, ttlMs: number, gen: string): Promise<void>
  /** Forget a cached user so the next request reads role and activo afresh. */
  dropUser (userId: string): Promise<void>
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

/** Request counters shared by all instances (SPEC S10) and the login lock-out (S8). */
export interface RateLimitStore {
  /** Counts one hit against each window and returns the counts, in order. */
  hit (windows: readonly Window[]): Promise<Counter[]>
  /**
   * Sliding-window attempt log (login lock-out): counts this attempt unless
   * `max` attempts already happened within the last `windowMs`. The result
   * counts this attempt, so `count > max` means refused; `resetMs` is then
   * the time until the oldest attempt leaves the window.
   */
  attempt (key: string, windowMs: number, max: number): Promise<Counter>
  /** Forgets a window or attempt log (a successful login clears its failures). */
  reset (key: string): Promise<void>
}
