/** `POST /{module}`: a new record (201, with its version as ETag). */
import { envelope } from '../../http/schemas.js'
import { etag } from '../record-request.js'
import type { Operation } from './operation.js'

export const create: Operation = {
  method: 'POST',
  url: '/',
  action: 'crear',
  config: { idempotencyKey: true },
  schema: (mod, { schemas, recordRef, tags, operationId }) => ({
    openapi: { body: schemas.doc.create, errors: [409], etag: true },
    schema: { tags, summary: `Crear un registro de ${mod.label}`, operationId: operationId('create'), body: schemas.create, response: { 201: envelope(recordRef) } },
  }),
  async handle (request, reply, mod) {
    const record = await request.records.of(mod).create(request.body as Record<string, unknown>)
    void reply.code(201).header('etag', etag(record))
    return { success: true, data: record }
  },
}
