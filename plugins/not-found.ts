/**
 * Unknown addresses. The token is checked first (docs/user-guide.md "Errors" order), then the
 * first path segment decides: not a module → `Módulo no encontrado`; a
 * module or service path with a wrong tail → `Ruta no encontrada`. A known
 * path with another method is a 405 (plugins/method-not-allowed.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { RESERVED_PATHS } from '../core/registry/build.js'
import { sendError } from '../http/errors.js'

async function notFoundPlugin (app: FastifyInstance): Promise<void> {
  app.setNotFoundHandler((request, reply) => {
    const segment = decodeURIComponent(request.url.split('?')[0]!.split('/')[1] ?? '')
    const known = app.registry.byPath.has(segment) || (RESERVED_PATHS as readonly string[]).includes(segment)
    return sendError(reply, known ? 'RUTA_NO_ENCONTRADA' : 'MODULO_NO_ENCONTRADO')
  })
}

export default fp(notFoundPlugin, { name: 'policia-not-found', fastify: '5.x', dependencies: ['policia-config', 'policia-auth'] })
