/** What the generated record routes read from a request: the id, the expected version; and the ETag they answer with. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../core/errors.js'

/** `_version` from the body, else the `If-Match` header; undefined when neither is sent. */
export function expectedVersion (request: FastifyRequest): number | undefined {
  const body = request.body as Record<string, unknown> | undefined
  if (body !== undefined && body !== null && '_version' in body) {
    const v = body._version
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new AppError('DATOS_INVALIDOS', [{ campo: '_version', mensaje: 'debe ser un número entero positivo' }])
    return v
  }
  const header = request.headers['if-match']
  if (header === undefined) return undefined
  const m = /^(?:W\/)?"?(\d{1,9})"?$/.exec(header.trim())
  if (m === null) throw new AppError('DATOS_INVALIDOS', [{ campo: 'If-Match', mensaje: 'debe ser "<versión>"' }])
  return Number(m[1])
}

/** The `:id` path parameter. */
export const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id
/** `ETag: "<_version>"` of a record (docs/user-guide.md "Concurrency, delete and restore"). */
export const etag = (record: Record<string, unknown>): string => `"${String(record._version)}"`

/**
 * An answer with expanded records (`expandir`): a ref holds an object where
 * the record schema's fast serializer writes a string, so this answer is
 * written by JSON.stringify; the plain answer keeps its serializer.
 */
export function expandedAnswer (reply: FastifyReply): void {
  // A serializer of its own sets no content type: the same as the plain answer's.
  void reply.type('application/json; charset=utf-8').serializer(JSON.stringify)
}
