/**
 * Request bodies: only `application/json` (415 otherwise), at most 1 MiB
 * (413), valid JSON (400 `JSON mal formado`), no `__proto__` or
 * `constructor.prototype` keys (400 `Datos inválidos`). An empty body is no
 * body, so a DELETE sent with a JSON content type still works.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import sjson from 'secure-json-parse'
import { AppError } from '../core/errors.js'

export const BODY_LIMIT = 1024 * 1024

async function jsonBodyPlugin (app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    const text = body as string
    if (text.trim() === '') { done(null, undefined); return }
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }))
    } catch (err) {
      done(err instanceof SyntaxError ? new AppError('JSON_MAL_FORMADO') : new AppError('DATOS_INVALIDOS', [{ campo: '__proto__', mensaje: 'clave prohibida' }]), undefined)
    }
  })
}

export default fp(jsonBodyPlugin, { name: 'policia-json-body', fastify: '5.x' })
