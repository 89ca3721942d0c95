/**
 * The one place where errors become responses: every failure leaves as
 * `{success: false, error, detalles?}` with a status and text from
 * core/errors.ts (mapping in http/errors.ts). Unknown errors are logged and
 * answered with a bare 500: no stack, no SQL, no values.
 */
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sendError, toAppError } from '../http/errors.js'


async function errorHandlerPlugin (app: FastifyInstance): Promise<void> {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = toAppError(err)
    if (known === undefined) {
      request.log.error({ err: { type: err.name, message: err.message, code: err.code, stack: err.stack } }, 'unhandled error')
      return sendError(reply, 'ERROR_INTERNO')
    }
    if (known.statusCode >= 500) request.log.warn({ err: { type: err.name, message: err.message } }, 'dependency unavailable')
    if (known.headers !== undefined) void reply.headers(known.headers)
    return sendError(reply, known.code, known.detalles)
  })
}

export default fp(errorHandlerPlugin, { name: 'policia-error-handler', fastify: '5.x' })
