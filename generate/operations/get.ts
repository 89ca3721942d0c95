/** `GET /{module}/{id}`: one record, with its version as ETag (docs/user-guide.md "Concurrency, delete and restore"). */
import { Type } from '@sinclair/typebox'
import { IdParams, envelope } from '../../http/schemas.js'
import { readShapeParameters } from '../list-parameters.js'
import { etag, expandedAnswer, idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const get: Operation = {
  method: 'GET',
  url: '/:id',
  action: 'ver',
  schema: (mod, { recordRef, readRef, tags, operationId }) => ({
    // Parsed by the records service (records/expansion.ts): documented only; with campos a partial record, and no ETag without _version.
    openapi: { etag: 'with-version', answer: envelope(readRef), querystring: Type.Object(readShapeParameters(mod), { additionalProperties: false }) },
    schema: { tags, summary: `Obtener un registro de ${mod.label}`, operationId: operationId('get'), params: IdParams, response: { 200: envelope(recordRef) } },
  }),
  async handle (request, reply, mod) {
    const query = request.query as Record<string, string | string[]>
    const record = await request.records.of(mod).get(idOf(request), query)
    // A projection without `_version` has no version to name (docs/user-guide.md "Choosing fields and related records (campos, expandir)").
    if (record._version !== undefined) void reply.header('etag', etag(record))
    if (query.expandir !== undefined) expandedAnswer(reply)
    return { success: true, data: record }
  },
}
