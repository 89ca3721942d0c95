/**
 * What is special about the users module, as subscribers of the records
 * hook bus: only a holder of `*.*` creates, edits, deletes or restores a
 * user whose role holds `*.*` (SPEC S8), and every write to a user is a
 * revocation: it raises the revocation epoch inside its transaction and,
 * after the commit, drops that user's cached snapshot on every instance, so
 * a change of role, `activo`, `personal_id` or password applies from the
 * next request (S8, S11), also after Redis comes back older (S15).
 */
import type { AccessTable } from '../../core/access.js'
import { AppError } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import { raiseRevocationEpoch } from '../../db/revocation-epoch.js'
import type { SessionStore } from '../../stores/types.js'
import type { HookBus } from '../hooks.js'

export function subscribeUsersPolicy (hooks: HookBus, users: ModuleDef, access: AccessTable, sessions: SessionStore): void {
  const rolField = users.fieldMap.get('rol')!
  const rolColumn = valueColumn(rolField)
  hooks.on(users.name, 'before', ({ caller, before, values }) => {
    if (access.isSuper(caller.rol)) return
    const targetRoles = [before?.[rolColumn], values.get(rolField)].filter((r): r is string => typeof r === 'string')
    if (targetRoles.some((r) => access.isSuper(r))) throw new AppError('SIN_PERMISOS')
  })
  // The epoch each write raised, by the row written (the same object in both
  // phases). A new user has nothing cached to revoke.
  const epochs = new WeakMap<object, number>()
  hooks.on(users.name, 'inside', async ({ action, after, em }) => {
    if (action !== 'crear') epochs.set(after!, await raiseRevocationEpoch(em!))
  })
  hooks.on(users.name, 'after', async ({ action, after }) => {
    if (action !== 'crear') await sessions.dropUser(after!._id as string, epochs.get(after!) ?? 0)
  })
}
