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
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      done(new AppError('JSON_MAL_FORMADO'), undefined)
      return
    }
    if (value !== null && typeof value === 'object') {
      try {
        sjson.scan(value as Record<string, unknown>, { protoAction: 'error', constructorAction: 'error' })
      } catch {
        done(new AppError('DATOS_INVALIDOS', [{ campo: '__proto__', mensaje: 'clave prohibida' }]), undefined)
        return
      }
    }
    done(null, value)
  })
}

export default fp(jsonBodyPlugin, { name: 'policia-json-body', fastify: '5.x' })
