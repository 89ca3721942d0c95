/** The session store's contract: token sessions and the user cache, what a request's authentication reads. */

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
