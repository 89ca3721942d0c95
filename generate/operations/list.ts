/** `GET /{module}`: a page of the records the caller may see (docs/user-guide.md "Listing"). */
import { Type } from '@sinclair/typebox'
import { envelope } from '../../http/schemas.js'
import { listQuerystring } from '../list-parameters.js'
import { expandedAnswer } from '../record-request.js'
import { filterShape } from '../../records/filter-shape.js'
import type { Operation } from './operation.js'

export const list: Operation = {
  method: 'GET',
  url: '/',
  action: 'ver',
  schema: (mod, { registry, timeZone, recordRef, readRef, tags, operationId }) => {
    const page = (record: typeof recordRef) => envelope(Type.Object({ records: Type.Array(record), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }))
    return {
      // The query is parsed by the records service (records/list-query.ts): documented only; with campos the records are partial.
      openapi: { querystring: listQuerystring(mod, registry, timeZone), answer: page(readRef) },
      schema: { tags, summary: `Listar ${mod.label}`, operationId: operationId('list'), response: { 200: page(recordRef) } },
    }
  },
  async handle (request, reply, mod) {
    const query = request.query as Record<string, string | string[]>
    const started = performance.now()
    const data = await request.records.of(mod).list(query)
    const elapsed = performance.now() - started
    // What an administrator needs to decide what to index (docs/administrator-guide.md "Indexes"); no values.
    if (elapsed >= request.server.config.slowListMs) request.log.warn({ modulo: mod.name, ...filterShape(query), ms: Math.round(elapsed), total: data.total }, 'slow list: declare an index for its filters in modules.yaml')
    if (query.expandir !== undefined) expandedAnswer(reply)
    return { success: true, data }
  },
}
