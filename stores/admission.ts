/**
 * Admitting a request (docs/user-guide.md "Rate limits"): count it against its rate-limit
 * windows and, when it carries a token, look its session and user up: one
 * operation of the stores, so that with Redis it is one command (one Lua
 * script, stores/rate-limits/redis.ts `hitAndRead`) instead of a
 * script and an MGET, and the admissions of one turn of the event loop one
 * script run between them; in process, the two stores are simply asked.
 */
import type { Counter, RateLimitStore, Window } from './rate-limits/contract.js'
import { LocalCounts } from './rate-limits/local-counts.js'
import { RedisRateLimitStore } from './rate-limits/redis.js'
import type { SessionLookup, SessionStore } from './sessions/contract.js'
import { LocalCopies } from './sessions/local-copies.js'
import { RedisSessionStore } from './sessions/redis.js'

export interface Admission {
  readonly counters: Counter[]
  /** The token's session and user as cached; undefined when no token was given. */
  readonly found?: SessionLookup
}

/** The admission, itself when answered here without waiting (stores/admission.ts `admitAheadOfRedis`), else its promise. */
export type Admit = (windows: readonly Window[], token?: { readonly jti: string, readonly userId: string }) => Admission | Promise<Admission>

export function admitInProcess (rateLimits: RateLimitStore, sessions: SessionStore): Admit {
  return async (windows, token) => {
    const [counters, found] = await Promise.all([rateLimits.hit(windows), token === undefined ? undefined : sessions.lookup(token.jti, token.userId)])
    return found === undefined ? { counters } : { counters, found }
  }
}

export function admitWithRedis (rateLimits: RedisRateLimitStore, sessions: RedisSessionStore): Admit {
  return async (windows, token) => {
    if (token === undefined) return { counters: await rateLimits.hit(windows) }
    let counters: Counter[] = []
    const found = await sessions.lookupWith(token.jti, token.userId, async (keys) => {
      const res = await rateLimits.hitAndRead(windows, keys)
      counters = res.counters
      return res.values
    })
    return { counters, found }
  }
}

/** One command when both stores are Redis ones (on one client), else both asked. */
export function admitFor (rateLimits: RateLimitStore, sessions: SessionStore): Admit {
  return rateLimits instanceof RedisRateLimitStore && sessions instanceof RedisSessionStore && rateLimits.client === sessions.client
    ? admitWithRedis(rateLimits, sessions)
    : admitInProcess(rateLimits, sessions)
}

/** An instance's admission, and how to close what it opened. */
export interface AdmissionSet {
  readonly admit: Admit
  close (): Promise<void>
}

/** The hits counted ahead of Redis are added there at most this often (ms)… */
const FLUSH_MS = 10
/** …and at the latest this long after they were admitted, when no window is pressing (ms). */
export const LAZY_FLUSH_MS = 100

/**
 * The Redis admission, answered without Redis when it can be
 * (docs/decisions.md "Admission without a round trip"): a token whose
 * session and user were read a moment ago (stores/sessions/local-copies.ts,
 * dropped as Redis announces their changes) and whose windows are far from
 * their limits (stores/rate-limits/local-counts.ts) is admitted here, its
 * hits added in Redis: once a window holds a share of its limit unsent
 * (stores/rate-limits/local-counts.ts `pressing`), at most every FLUSH_MS,
 * else within LAZY_FLUSH_MS, so a busy instance far from every limit
 * sends ten scripts a second rather than a hundred. Any other request, and
 * every request while the link to Redis is not whole, is `admitWithRedis`'s.
 */
export function admitAheadOfRedis (rateLimits: RedisRateLimitStore, sessions: RedisSessionStore): AdmissionSet {
  const exact = admitWithRedis(rateLimits, sessions)
  const counts = new LocalCounts()
  const copies = new LocalCopies()
  const changes = sessions.changes
  const onChange = (keys: readonly string[] | '*'): void => {
    if (keys === '*') {
      copies.clear()
      counts.clear()
      return
    }
    for (const key of keys) {
      const k = sessions.keyOf(key)
      if (k === undefined) continue
      if ('session' in k) copies.dropSession(k.session)
      else copies.dropUser(k.user)
    }
  }
  let unlisten: (() => void) | undefined
  let epoch = sessions.knownEpoch
  let stamp = 0
  let timer: NodeJS.Timeout | undefined
  /** When `timer` fires, and when the last flush began (ms since the epoch). */
  let timerAt = Infinity
  let flushedAt = 0

  const flush = async (): Promise<void> => {
    timer = undefined
    timerAt = Infinity
    flushedAt = Date.now()
    const increments = counts.take()
    if (increments.length === 0) return
    try {
      counts.settle(increments, await rateLimits.add(increments), Date.now())
    } catch {
      counts.forget(increments)
    }
  }

  /** A flush at `at` unless one comes sooner. */
  const flushBy = (at: number, now: number): void => {
    if (at >= timerAt) return
    if (timer !== undefined) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(() => { void flush() }, at - now).unref()
  }

  // Not async: a request answered here gets its admission itself, no promise (docs/performance.md "A create runs cold").
  const admit: Admit = (windows, token) => {
    if (token === undefined) return exact(windows)
    // Opened on the first request: a command-line tool that builds the stores never needs it.
    unlisten ??= changes.listen(onChange)
    // A revocation this instance learnt of from the database (its own, the periodic check).
    if (sessions.knownEpoch !== epoch) {
      epoch = sessions.knownEpoch
      copies.clear()
    }
    const now = Date.now()
    const held = changes.whole ? copies.get(token.jti, token.userId, now) : undefined
    const counters = held === undefined ? undefined : counts.tryHit(windows, now)
    if (held !== undefined && counters !== undefined) {
      flushBy(counts.pressing ? Math.max(now, flushedAt + FLUSH_MS) : now + LAZY_FLUSH_MS, now)
      return { counters, found: { ...held, stamp } }
    }
    return fromRedis(windows, token)
  }

  const fromRedis = async (windows: readonly Window[], token: { readonly jti: string, readonly userId: string }): Promise<Admission> => {
    // This instance's own hits go first (one connection, in order): Redis's count then includes them.
    if (timer !== undefined) {
      clearTimeout(timer)
      void flush()
    }
    const generation = changes.generation
    const wasWhole = changes.whole
    const admission = await exact(windows, token)
    const later = Date.now()
    counts.learn(windows, admission.counters, later)
    const found = admission.found!
    stamp = found.stamp
    // Copied only when no change was heard while the read was on its way.
    if (wasWhole && changes.whole && changes.generation === generation && epoch === sessions.knownEpoch && found.session !== null && found.user !== null) {
      copies.put(token.jti, found.session, found.user, later)
    }
    return admission
  }

  return {
    admit,
    async close () {
      if (timer !== undefined) clearTimeout(timer)
      await flush()
      unlisten?.()
    },
  }
}

/** The admission an instance uses: ahead of Redis when both stores are Redis ones on one client, else `admitFor`'s. */
export function admissionFor (rateLimits: RateLimitStore, sessions: SessionStore): AdmissionSet {
  return rateLimits instanceof RedisRateLimitStore && sessions instanceof RedisSessionStore && rateLimits.client === sessions.client
    ? admitAheadOfRedis(rateLimits, sessions)
    : { admit: admitInProcess(rateLimits, sessions), close: async () => {} }
}
