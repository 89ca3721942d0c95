/** `GET /{module}`: a page of the records the caller may see (docs/user-guide.md "Listing"). */
import { Type } from '@sinclair/typebox'
import { envelope } from '../../http/schemas.js'
import { listQuerystring } from '../list-parameters.js'
import type { Operation } from './operation.js'

export const list: Operation = {
  method: 'GET',
  url: '/',
  action: 'ver',
  schema: (mod, { registry, timeZone, recordRef, tags, operationId }) => ({
    // The query is parsed by the records service (records/list-query.ts): documented only.
    openapi: { querystring: listQuerystring(mod, registry, timeZone) },
    schema: { tags, summary: `Listar ${mod.label}`, operationId: operationId('list'), response: { 200: envelope(Type.Object({ records: Type.Array(recordRef), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) } },
  }),
  async handle (request, _reply, mod) {
    return { success: true, data: await request.records.of(mod).list(request.query as Record<string, string | string[]>) }
  },
}
