/** `GET /{module}/{id}`: one record, with its version as ETag (docs/user-guide.md "Concurrency, delete and restore"). */
import { IdParams, envelope } from '../../http/schemas.js'
import { etag, idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const get: Operation = {
  method: 'GET',
  url: '/:id',
  action: 'ver',
  schema: (mod, { recordRef, tags, operationId }) => ({
    openapi: { etag: true },
    schema: { tags, summary: `Obtener un registro de ${mod.label}`, operationId: operationId('get'), params: IdParams, response: { 200: envelope(recordRef) } },
  }),
  async handle (request, reply, mod) {
    const record = await request.records.of(mod).get(idOf(request))
    void reply.header('etag', etag(record))
    return { success: true, data: record }
  },
}
