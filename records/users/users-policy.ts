/**
 * What is special about the users module, as subscribers of the records
 * hook bus: only a holder of `*.*` creates, edits, deletes or restores a
 * user whose role holds `*.*` (SPEC S8), and every write to a user drops
 * that user's cached snapshot on every instance, so a change of role,
 * `activo` or `personal_id` applies from the next request (S8, S11).
 */
import type { AccessTable } from '../../core/access.js'
import { AppError } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
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
  hooks.on(users.name, 'after', async ({ after }) => {
    await sessions.dropUser(after!._id as string)
  })
}
