/**
 * What is special about the users module: only a holder of `*.*` creates,
 * edits or deletes a user whose role holds `*.*` (SPEC S8), and every write
 * to a user drops that user's cached snapshot on every instance, so a role
 * change or `activo: false` applies from the next request.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../../core/errors.js'
import { valueColumn } from '../../db/columns.js'
import type { ModuleHooks } from '../hooks.js'

async function usersPolicy (app: FastifyInstance): Promise<void> {
  const users = app.registry.usersModule
  const rolField = users.fieldMap.get('rol')!
  const rolColumn = valueColumn(rolField)
  const hooks: ModuleHooks = {
    beforeWrite ({ caller, before, values }) {
      if (app.permissions.isSuper(caller.rol)) return
      const targetRoles = [before?.[rolColumn], values.get(rolField)].filter((r): r is string => typeof r === 'string')
      if (targetRoles.some((r) => app.permissions.isSuper(r))) throw new AppError('SIN_PERMISOS')
    },
    async afterWrite ({ after }) {
      await app.stores.sessions.dropUser(after._id as string)
    },
  }
  app.moduleHooks.set(users.name, hooks)
}

export default fp(usersPolicy, { name: 'policia-users-policy', fastify: '5.x', dependencies: ['policia-config', 'policia-stores'] })
