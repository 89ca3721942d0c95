/**
 * `PUT /{module}/{id}`: changes the fields sent, against the version the
 * client read (`_version` or `If-Match`, docs/user-guide.md "Concurrency, delete and restore").
 */
import { AppError } from '../../core/errors.js'
import { IdParams, envelope } from '../../http/schemas.js'
import { IF_MATCH } from '../../http/openapi-headers.js'
import { etag, expectedVersion, idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const update: Operation = {
  method: 'PUT',
  url: '/:id',
  action: 'editar',
  schema: (mod, { schemas, recordRef, tags, operationId }) => ({
    openapi: { body: schemas.doc.update, headers: IF_MATCH, errors: [409], etag: true },
    schema: { tags, summary: `Modificar un registro de ${mod.label}`, operationId: operationId('update'), params: IdParams, body: schemas.update, response: { 200: envelope(recordRef) } },
  }),
  async handle (request, reply, mod) {
    const body = request.body as Record<string, unknown>
    // Only `_` keys (ignored): nothing to change.
    if (!Object.keys(body).some((k) => !k.startsWith('_'))) throw new AppError('DATOS_REQUERIDOS')
    const record = await request.records.of(mod).update(idOf(request), body, expectedVersion(request))
    void reply.header('etag', etag(record))
    return { success: true, data: record }
  },
}
