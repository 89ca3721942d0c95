/**
 * `POST /usuarios/{id}/desbloquear` (docs/user-guide.md "Rate limits"): lifts the login lock-out of the
 * user's username on every address and device. Needs `usuarios.editar`
 * within its scope, and only a superadmin acts on a superadmin, as for
 * edits (the sessions service asks).
 */
import { Type } from '@sinclair/typebox'
import { MESSAGES } from '../../../core/errors.js'
import { IdParams, envelope } from '../../../http/schemas.js'
import { idOf } from '../../record-request.js'
import type { Operation } from '../operation.js'

export const unlock: Operation = {
  method: 'POST',
  url: '/:id/desbloquear',
  schema: (_mod, { tags }) => ({
    openapi: { errors: [403] },
    schema: {
      tags,
      operationId: 'desbloquearUsuario',
      summary: 'Levantar el bloqueo de inicio de sesión de un usuario',
      description: 'Olvida los intentos fallidos de inicio de sesión del usuario desde todas las direcciones y dispositivos. Requiere `usuarios.editar`; solo un superadmin actúa sobre un superadmin.',
      params: IdParams,
      response: { 200: envelope(Type.Object({ message: Type.String() })) },
    },
  }),
  async handle (request, _reply, mod) {
    const { user, logs } = await request.server.sessions.unlock(request.records.of(mod), request.caller, idOf(request))
    request.log.info({ user, logs }, 'login lock-out lifted')
    return { success: true, data: { message: MESSAGES.USUARIO_DESBLOQUEADO } }
  },
}
