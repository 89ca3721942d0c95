/**
 * The one place where errors become responses: every failure leaves as
 * `{success: false, error, codigo, detalles?}` with a status and text from
 * core/errors.ts (mapping in http/errors.ts). Unknown errors are logged and
 * answered with a bare 500: no stack, no SQL, no values.
 */
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sendError, toAppError } from '../http/errors.js'
import { dropRestOfBody } from '../http/drop-rest-of-body.js'
import { databaseUnavailableReason } from '../http/database-unavailable.js'
import { UnavailableError } from '../core/errors.js'

/** Headers of a successful answer that an error answer never carries. */
const SUCCESS_HEADERS = ['etag', 'content-range', 'content-disposition', 'content-length', 'accept-ranges']

async function errorHandlerPlugin (app: FastifyInstance): Promise<void> {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // What a handler set for its success does not describe the error (a download found altered mid-way keeps no ETag).
    for (const name of SUCCESS_HEADERS) reply.removeHeader(name)
    // A streamed body refused before its end (http/drop-rest-of-body.ts).
    dropRestOfBody(request.raw)
    const known = toAppError(err)
    if (known === undefined) {
      request.log.error({ err: { type: err.name, message: err.message, code: err.code, stack: err.stack } }, 'unhandled error')
      return sendError(reply, 'ERROR_INTERNO')
    }
    // The reason is a code (57P01, ECONNREFUSED …), never a driver message with its SQL and values.
    if (known instanceof UnavailableError) {
      request.log.warn({ type: err.name, dependency: known.dependency, reason: known.reason }, `${known.dependency} unavailable`)
      app.countUnavailable(known.label)
    } else if (known.code === 'SERVICIO_NO_DISPONIBLE') {
      const reason = databaseUnavailableReason(err)
      request.log.warn({ type: err.name, reason: reason ?? err.message }, 'dependency unavailable')
      // A driver's error mapped here (http/errors.ts): PostgreSQL's when recognised as such, else Redis's.
      if (known !== err) app.countUnavailable(reason !== undefined ? 'postgresql' : 'redis')
    }
    if (known.headers !== undefined) void reply.headers(known.headers)
    return sendError(reply, known.code, known.detalles)
  })
}

export default fp(errorHandlerPlugin, { name: 'policia-error-handler', fastify: '5.x' })
