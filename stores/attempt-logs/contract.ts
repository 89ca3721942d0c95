/** A sliding log of attempts (login lock-out): at most `max` within any `windowMs`. */
export interface AttemptLog {
  readonly key: string
  readonly windowMs: number
  readonly max: number
}

/** How full one log is, as read without logging anything. */
export interface LogFill {
  /** Attempts within its window now. */
  readonly count: number
  /** Milliseconds until it has room again; 0 when it has room. */
  readonly retryMs: number
}

export interface AttemptResult {
  /** false: a log already held `max` attempts in its window, and this attempt was logged nowhere. */
  readonly allowed: boolean
  /** When refused: milliseconds until every full log has room again. */
  readonly retryMs: number
  /** Attempts in each log (in order) within its window: after this one when allowed, as found when refused. */
  readonly counts: readonly number[]
}

/**
 * The login lock-out's sliding logs of attempts, shared by all instances
 * (docs/user-guide.md "Rate limits"), with the unlock of one username on
 * every address (docs/user-guide.md "Accounts and sessions"). What each log
 * means is http/login-lockout.ts's business.
 */
export interface AttemptLogStore {
  /**
   * Logs attempt `id` in every log, atomically, unless one of them is
   * full (then in none): parallel attempts can never get past a limit.
   * `index` names a set that remembers the keys of the logs written, so
   * all of them can be cleared together (`clear`).
   */
  attempt (logs: readonly AttemptLog[], id: string, index?: string): Promise<AttemptResult>
  /** How full `log` is now; logs nothing (a user's lock status, `GET /usuarios/{id}`). */
  fill (log: AttemptLog): Promise<LogFill>
  /** Takes attempt `id` out of one log (a login that succeeded was no failure). */
  forget (key: string, id: string): Promise<void>
  /** Forgets an attempt log. */
  reset (key: string): Promise<void>
  /**
   * Forgets, atomically, every log `attempt` recorded in `index`, the
   * logs `keys`, and the index itself (unlocking a username on every
   * address, docs/user-guide.md "Accounts and sessions"). Returns how many logs held attempts.
   */
  clear (index: string, keys: readonly string[]): Promise<number>
}
