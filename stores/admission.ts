/**
 * Admitting a request (docs/user-guide.md "Rate limits"): count it against its rate-limit
 * windows and, when it carries a token, look its session and user up: one
 * operation of the stores, so that with Redis it is one command (one Lua
 * script, stores/rate-limits/redis.ts `hitAndRead`) instead of a
 * script and an MGET, and the admissions of one turn of the event loop one
 * script run between them; in process, the two stores are simply asked.
 */
import type { Counter, RateLimitStore, Window } from './rate-limits/contract.js'
import { RedisRateLimitStore } from './rate-limits/redis.js'
import type { SessionLookup, SessionStore } from './sessions/contract.js'
import { RedisSessionStore } from './sessions/redis.js'

export interface Admission {
  readonly counters: Counter[]
  /** The token's session and user as cached; undefined when no token was given. */
  readonly found?: SessionLookup
}

export type Admit = (windows: readonly Window[], token?: { readonly jti: string, readonly userId: string }) => Promise<Admission>

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
