/** `DELETE /{module}/{id}`: a soft delete (docs/user-guide.md "Concurrency, delete and restore"); operationId `delete…`. */
import { MESSAGES } from '../../core/errors.js'
import { IdParams, Message } from '../../http/schemas.js'
import { IF_MATCH } from '../../http/openapi-headers.js'
import { expectedVersion, idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const remove: Operation = {
  method: 'DELETE',
  url: '/:id',
  action: 'eliminar',
  schema: (mod, { tags, operationId }) => ({
    // A malformed If-Match is a 400.
    openapi: { headers: IF_MATCH, errors: [400, 409] },
    schema: { tags, summary: `Eliminar (borrado lógico) un registro de ${mod.label}`, operationId: operationId('delete'), params: IdParams, response: { 200: Message } },
  }),
  async handle (request, _reply, mod) {
    await request.records.of(mod).remove(idOf(request), expectedVersion(request))
    return { success: true, data: { message: MESSAGES.REGISTRO_ELIMINADO } }
  },
}
