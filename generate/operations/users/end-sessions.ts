/**
 * `POST /usuarios/{id}/cerrar-sesiones` (docs/user-guide.md "Accounts and sessions"): revokes every
 * session of the user, on every instance, without writing the user. Needs
 * `usuarios.editar` within its scope, and only a superadmin acts on a
 * superadmin, as for edits (the sessions service asks).
 */
import { Type } from '@sinclair/typebox'
import { MESSAGES } from '../../../core/errors.js'
import { IdParams, envelope } from '../../../http/schemas.js'
import { idOf } from '../../record-request.js'
import type { Operation } from '../operation.js'

export const endSessions: Operation = {
  method: 'POST',
  url: '/:id/cerrar-sesiones',
  schema: (_mod, { tags }) => ({
    openapi: { errors: [403] },
    schema: {
      tags,
      operationId: 'cerrarSesionesUsuario',
      summary: 'Cerrar todas las sesiones de un usuario',
      description: 'Revoca todos los tokens emitidos al usuario, en todas las instancias. Requiere `usuarios.editar`; solo un superadmin actúa sobre un superadmin.',
      params: IdParams,
      response: { 200: envelope(Type.Object({ message: Type.String(), sesiones_cerradas: Type.Integer({ description: 'Sesiones vigentes que se revocaron' }) })) },
    },
  }),
  async handle (request, _reply, mod) {
    const { user, sessions } = await request.server.sessions.endAll(request.em, request.records.of(mod), request.caller, idOf(request))
    request.log.info({ user, sessions }, 'sessions ended')
    return { success: true, data: { message: MESSAGES.SESIONES_CERRADAS, sesiones_cerradas: sessions } }
  },
}
