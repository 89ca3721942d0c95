/**
 * Actions on a user that are no write of the user record (docs/user-guide.md "Accounts and sessions"):
 * `POST /usuarios/{id}/cerrar-sesiones` revokes every session of the user;
 * `POST /usuarios/{id}/desbloquear` lifts the login lock-out of the user's
 * username on every address and device. Both need `usuarios.editar` (within its
 * scope), and only a superadmin acts on a superadmin, as for edits.
 * Registered under the users module's path.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { MESSAGES } from '../core/errors.js'
import { valueColumn } from '../db/columns.js'
import type { Row } from '../db/module-entity.js'
import { IdParams, envelope } from '../http/schemas.js'
import { unlockLogin } from '../http/login-lockout.js'
import { checkSuperTarget } from '../records/users/users-policy.js'
import { endSessions } from '../records/users/user-sessions.js'

async function usersSessionsRoutes (app: FastifyInstance): Promise<void> {
  const users = app.registry.usersModule
  const rolColumn = valueColumn(users.fieldMap.get('rol')!)
  const usernameColumn = valueColumn(users.fieldMap.get('username')!)
  const tags = [users.label]

  /** The user named in the path, when the caller may act on it (403, 404 as for PUT). */
  async function target (request: FastifyRequest): Promise<Row> {
    const row = await request.records.of(users).target((request.params as { id: string }).id, 'editar')
    checkSuperTarget(app.access, request.caller, row[rolColumn])
    return row
  }

  app.post(`/${users.path}/:id/cerrar-sesiones`, {
    config: { openapi: { errors: [403] } },
    schema: {
      tags,
      operationId: 'cerrarSesionesUsuario',
      summary: 'Cerrar todas las sesiones de un usuario',
      description: 'Revoca todos los tokens emitidos al usuario, en todas las instancias. Requiere `usuarios.editar`; solo un superadmin actúa sobre un superadmin.',
      params: IdParams,
      response: { 200: envelope(Type.Object({ message: Type.String(), sesiones_cerradas: Type.Integer({ description: 'Sesiones vigentes que se revocaron' }) })) },
    },
  }, async (request) => {
    const row = await target(request)
    const n = await endSessions(request.em, app.stores.sessions, row._id as string)
    request.log.info({ user: row._id, sessions: n }, 'sessions ended')
    return { success: true, data: { message: MESSAGES.SESIONES_CERRADAS, sesiones_cerradas: n } }
  })

  app.post(`/${users.path}/:id/desbloquear`, {
    config: { openapi: { errors: [403] } },
    schema: {
      tags,
      operationId: 'desbloquearUsuario',
      summary: 'Levantar el bloqueo de inicio de sesión de un usuario',
      description: 'Olvida los intentos fallidos de inicio de sesión del usuario desde todas las direcciones y dispositivos. Requiere `usuarios.editar`; solo un superadmin actúa sobre un superadmin.',
      params: IdParams,
      response: { 200: envelope(Type.Object({ message: Type.String() })) },
    },
  }, async (request) => {
    const row = await target(request)
    const logs = await unlockLogin(app.stores.attemptLogs, row[usernameColumn] as string)
    request.log.info({ user: row._id, logs }, 'login lock-out lifted')
    return { success: true, data: { message: MESSAGES.USUARIO_DESBLOQUEADO } }
  })
}

export default fp(usersSessionsRoutes, { name: 'policia-users-sessions-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records'] })
