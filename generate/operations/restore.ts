/** `POST /{module}/{id}/restaurar`: brings a soft-deleted record back (docs/user-guide.md "Concurrency, delete and restore"). */
import { IdParams, envelope } from '../../http/schemas.js'
import { etag, idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const restore: Operation = {
  method: 'POST',
  url: '/:id/restaurar',
  action: 'eliminar',
  schema: (mod, { recordRef, tags, operationId }) => ({
    openapi: { etag: true },
    schema: { tags, summary: `Restaurar un registro eliminado de ${mod.label}`, operationId: operationId('restore'), params: IdParams, response: { 200: envelope(recordRef) } },
  }),
  async handle (request, reply, mod) {
    const record = await request.records.of(mod).restore(idOf(request))
    void reply.header('etag', etag(record))
    return { success: true, data: record }
  },
}
