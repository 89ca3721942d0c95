/**
 * Ending sessions without writing the user (docs/user-guide.md "Accounts and sessions"): one
 * (`POST /auth/logout`) or every session of a user (`POST
 * /usuarios/{id}/cerrar-sesiones`). The database first, in one transaction
 * with the revocation epoch, then the cache on every instance, which learns
 * the epoch with it. The writes that end sessions as a side effect (a
 * password set, a deactivation, a deletion) do the same inside their own
 * transaction (records/users/users-policy.ts).
 */
import type { Db } from '../../db/statement.js'
import { raiseRevocationEpoch } from '../../db/revocation-epoch.js'
import { revokeSession, revokeUserSessions, type RevokedSession } from '../../db/session-entity.js'
import type { SessionStore } from '../../stores/sessions/contract.js'
import { inTransaction } from '../../db/transaction.js'

/** The revoked sessions as the cache takes them (time left until each token expires). */
export function forCache (revoked: readonly RevokedSession[]): Array<{ jti: string, ttlMs: number }> {
  const now = Date.now()
  return revoked.map((s) => ({ jti: s.jti, ttlMs: s.expira.getTime() - now }))
}

/** Revokes the session `jti` of `userId`, whose token expires at `expiresAt` (milliseconds since the epoch). */
export async function endSession (em: Db, sessions: SessionStore, userId: string, jti: string, expiresAt: number): Promise<void> {
  const epoch = await inTransaction(em, async (tem) => {
    await revokeSession(tem, jti, new Date())
    return raiseRevocationEpoch(tem)
  })
  await sessions.revokeSession(jti, userId, expiresAt - Date.now(), epoch)
}

/** Revokes every unexpired session of `userId`; returns how many there were. */
export async function endSessions (em: Db, sessions: SessionStore, userId: string): Promise<number> {
  const { epoch, revoked } = await inTransaction(em, async (tem) => {
    const epoch = await raiseRevocationEpoch(tem)
    return { epoch, revoked: await revokeUserSessions(tem, userId) }
  })
  await sessions.revokeUser(userId, forCache(revoked), epoch)
  return revoked.length
}
