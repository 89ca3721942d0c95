/**
 * One instance's copies of sessions and user snapshots as the shared cache
 * last answered them (docs/decisions.md "Admission without a round trip"),
 * so that a request whose token was seen a moment ago needs no Redis read.
 * A copy is dropped when Redis announces a change of its key
 * (stores/sessions/cache-changes.ts), when the link to Redis was not whole
 * at any moment, when the instance learns a newer revocation epoch, and at
 * the latest after COPY_MS: the session cache in Redis stays what decides.
 */
import type { CachedSession, UserSnapshot } from './contract.js'

/** How long a copy is used at most (the period of the revocation epoch check, plugins/auth.ts). */
export const COPY_MS = 2_000
/** Copies kept at most, of each kind; the oldest go first. */
const MAX_COPIES = 10_000

interface Copy<T> {
  readonly value: T
  readonly until: number
}

function putBounded<T> (map: Map<string, Copy<T>>, key: string, copy: Copy<T>): void {
  map.delete(key)
  if (map.size >= MAX_COPIES) map.delete(map.keys().next().value!)
  map.set(key, copy)
}

export class LocalCopies {
  private readonly sessions = new Map<string, Copy<CachedSession>>()
  private readonly users = new Map<string, Copy<UserSnapshot>>()

  /** Both copies, when both are held and fresh. */
  get (jti: string, userId: string, now: number): { session: CachedSession, user: UserSnapshot } | undefined {
    const s = this.sessions.get(jti)
    const u = this.users.get(userId)
    if (s === undefined || u === undefined || s.until <= now || u.until <= now) return undefined
    return { session: s.value, user: u.value }
  }

  put (jti: string, session: CachedSession, user: UserSnapshot, now: number): void {
    putBounded(this.sessions, jti, { value: session, until: now + COPY_MS })
    putBounded(this.users, user.id, { value: user, until: now + COPY_MS })
  }

  dropSession (jti: string): void { this.sessions.delete(jti) }
  dropUser (id: string): void { this.users.delete(id) }

  clear (): void {
    this.sessions.clear()
    this.users.clear()
  }
}
