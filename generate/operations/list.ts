/** `GET /{module}`: a page of the records the caller may see (docs/user-guide.md "Listing"). */
import { Type } from '@sinclair/typebox'
import { envelope } from '../../http/schemas.js'
import { listQuerystring } from '../list-parameters.js'
import { expandedAnswer } from '../record-request.js'
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
  async handle (request, reply, mod) {
    const query = request.query as Record<string, string | string[]>
    const data = await request.records.of(mod).list(query)
    if (query.expandir !== undefined) expandedAnswer(reply)
    return { success: true, data }
  },
}
