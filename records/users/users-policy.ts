/**
 * What is special about the users module, as subscribers of the records
 * hook bus:
 * - only a holder of `*.*` creates, edits, deletes or restores a user whose
 *   role holds `*.*` (docs/user-guide.md "Authentication and roles");
 * - a password must not be a documented placeholder nor the username, and
 *   must fit the field's length, wherever it is set (HTTP, the command
 *   line, ADMIN_PASSWORD at start-up; docs/user-guide.md "Accounts and sessions");
 * - every write to a user is a revocation: it raises the revocation epoch
 *   inside its transaction and, after the commit, drops that user's cached
 *   snapshot on every instance, so a change of role, `activo`,
 *   `personal_id` or password applies from the next request (docs/user-guide.md "Authentication and roles"),
 *   also after Redis comes back older (docs/operator-guide.md);
 * - a password set, a deactivation and a deletion also revoke the user's
 *   sessions, in the database in the same transaction, then in the cache
 *   (docs/user-guide.md "Accounts and sessions"): reactivating or restoring the user revives no old token. When
 *   the caller sets their own password, the session they act with stays.
 */
import type { AccessTable, Caller } from '../../core/access.js'
import { AppError } from '../../core/errors.js'
import { passwordProblem } from '../../core/passwords.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import { raiseRevocationEpoch } from '../../db/revocation-epoch.js'
import { revokeUserSessions, type RevokedSession } from '../../db/session-entity.js'
import type { SessionStore } from '../../stores/sessions/contract.js'
import type { HookBus, WriteEvent } from '../hooks.js'
import { forCache } from '../auth/user-sessions.js'

/** 403 unless the caller may act on a user of role `targetRol` (only a superadmin acts on a superadmin). */
export function checkSuperTarget (access: AccessTable, caller: Caller, targetRol: unknown): void {
  if (!access.isSuper(caller.rol) && typeof targetRol === 'string' && access.isSuper(targetRol)) throw new AppError('SIN_PERMISOS')
}

export function subscribeUsersPolicy (hooks: HookBus, users: ModuleDef, access: AccessTable, sessions: SessionStore): void {
  const rolField = users.fieldMap.get('rol')!
  const rolColumn = valueColumn(rolField)
  const usernameField = users.fieldMap.get('username')!
  const passwordField = users.fieldMap.get('password')!
  const activoField = users.fieldMap.get('activo')
  hooks.on(users.name, 'before', ({ caller, before, values }) => {
    checkSuperTarget(access, caller, before?.[rolColumn])
    checkSuperTarget(access, caller, values.get(rolField))
    const password = values.get(passwordField)
    if (typeof password === 'string') {
      const username = (values.get(usernameField) ?? before?.[valueColumn(usernameField)]) as string | undefined
      const problem = passwordProblem(password, username, passwordField)
      if (problem !== undefined) throw new AppError('DATOS_INVALIDOS', [{ campo: passwordField.name, mensaje: problem.mensaje }])
    }
  })

  /** Whether this write ends the user's sessions, and which one it keeps. */
  const ending = ({ action, caller, values, after }: WriteEvent): { keep?: string } | undefined => {
    if (action === 'eliminar') return {}
    if (action !== 'editar') return undefined
    if (activoField !== undefined && values.get(activoField) === false) return {}
    if (values.get(passwordField) === undefined) return undefined
    return caller.id === after!._id && caller.jti !== undefined ? { keep: caller.jti } : {}
  }

  // What each write did inside its transaction, by the row written (the
  // same object in both phases). A new user has nothing cached to revoke.
  const done = new WeakMap<object, { epoch: number, revoked: RevokedSession[] }>()
  hooks.on(users.name, 'inside', async (event) => {
    if (event.action === 'crear') return
    const epoch = await raiseRevocationEpoch(event.em!)
    const end = ending(event)
    const revoked = end === undefined ? [] : await revokeUserSessions(event.em!, event.after!._id as string, end.keep)
    done.set(event.after!, { epoch, revoked })
  })
  hooks.on(users.name, 'after', async ({ action, after }) => {
    if (action === 'crear') return
    const { epoch, revoked } = done.get(after!) ?? { epoch: 0, revoked: [] }
    await sessions.revokeUser(after!._id as string, forCache(revoked), epoch)
  })
}
