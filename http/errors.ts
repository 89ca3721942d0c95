/**
 * How any error becomes an error answer (docs/user-guide.md "Errors"): the code of core/errors.ts it means
 * (Fastify's own errors, validation, the database and Redis going away),
 * and the envelope `{success: false, error, codigo, detalles?}` it is sent in.
 */
import type { FastifyError, FastifyReply } from 'fastify'
import { ConnectionException, UniqueConstraintViolationException } from '@mikro-orm/core'
import { AppError, ERRORS, type ErrorCode, type ErrorDetail } from '../core/errors.js'
import { validationError } from './validation-errors.js'
import { isDatabaseUnavailable } from './database-unavailable.js'

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'TIPO_CONTENIDO_NO_SOPORTADO',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PETICION_DEMASIADO_GRANDE',
  FST_ERR_CTP_INVALID_JSON_BODY: 'JSON_MAL_FORMADO',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'DATOS_REQUERIDOS',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'DATOS_INVALIDOS',
  FST_ERR_CTP_INVALID_TYPE: 'TIPO_CONTENIDO_NO_SOPORTADO',
}

/**
 * Seconds a client is told to wait when PostgreSQL or Redis is not there:
 * a restart or a failover is over in seconds (docs/operations.md), and a
 * client that retries sooner only adds load.
 */
export const DEPENDENCY_RETRY_AFTER_S = 5

/** Redis unreachable: ioredis errors carry no class we can import cheaply. */
function isRedisDown (err: Error): boolean {
  return err.name === 'MaxRetriesPerRequestError' ||
    /Connection is closed|Stream isn't writeable|enableOfflineQueue|Command timed out/.test(err.message)
}

export function toAppError (err: FastifyError | Error): AppError | undefined {
  if (err instanceof AppError) return err
  const fe = err as FastifyError
  if (fe.validation !== undefined) return validationError(fe.validation, fe.validationContext)
  if (fe.code !== undefined && fe.code in FASTIFY_CODES) return new AppError(FASTIFY_CODES[fe.code]!)
  if (err instanceof UniqueConstraintViolationException) return new AppError('REGISTRO_DUPLICADO')
  if (err instanceof ConnectionException || isDatabaseUnavailable(err) || isRedisDown(err)) return new AppError('SERVICIO_NO_DISPONIBLE', undefined, { 'retry-after': String(DEPENDENCY_RETRY_AFTER_S) })
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return new AppError('PETICION_DEMASIADO_GRANDE')
    if (fe.statusCode === 415) return new AppError('TIPO_CONTENIDO_NO_SOPORTADO')
    return new AppError('DATOS_INVALIDOS')
  }
  return undefined
}

/** What an error answers: the Spanish text for people, `codigo` (its key in core/errors.ts) for programs. */
export interface ErrorBody {
  success: false
  error: string
  codigo: ErrorCode
  detalles?: ErrorDetail[]
}

/** The envelope of an error (docs/user-guide.md "Errors"). */
export function errorBody (code: ErrorCode, detalles?: ErrorDetail[]): ErrorBody {
  const body: ErrorBody = { success: false, error: ERRORS[code].message, codigo: code }
  if (detalles !== undefined && detalles.length > 0) body.detalles = detalles
  return body
}

export function sendError (reply: FastifyReply, code: ErrorCode, detalles?: ErrorDetail[]): FastifyReply {
  return reply.code(ERRORS[code].status).type('application/json; charset=utf-8').send(errorBody(code, detalles))
}
