/**
 * GET /health (liveness) and GET /ready (database and Redis reachable); no
 * token. /health is never limited; /ready has a per-IP window of its own
 * (docs/user-guide.md "Rate limits") and, as that section says, no RateLimit-* headers but on a 429.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { sendError } from '../http/errors.js'
import { envelope } from '../http/schemas.js'

const Alive = envelope(Type.Object({ status: Type.Literal('ok') }))
const Ready = envelope(Type.Object({
  status: Type.Literal('ready'),
  database: Type.String({ description: 'ok' }),
  redis: Type.String({ description: 'ok, o in-process sin REDIS_URL' }),
}))

async function healthPlugin (app: FastifyInstance): Promise<void> {
  app.get('/health', { config: { public: true, rateLimit: false }, schema: { tags: ['Operación'], summary: 'Vivo', operationId: 'health', response: { 200: Alive } } }, async () => {
    return { success: true, data: { status: 'ok' } }
  })
  app.get('/ready', { config: { public: true, rateLimit: 'ready', rateLimitHeaders: false, openapi: { errors: [503] } }, schema: { tags: ['Operación'], summary: 'Listo: base de datos y Redis accesibles', operationId: 'ready', response: { 200: Ready } } }, async (request, reply) => {
    const checks: Record<string, string> = {}
    try {
      await app.orm.em.getConnection().execute('select 1')
      checks.database = 'ok'
    } catch { checks.database = 'down' }
    if (app.hasDecorator('redis')) {
      try {
        await app.redis.ping()
        checks.redis = 'ok'
      } catch { checks.redis = 'down' }
    } else {
      checks.redis = 'in-process'
    }
    if (Object.values(checks).includes('down')) {
      request.log.warn({ checks }, 'not ready')
      return sendError(reply, 'SERVICIO_NO_DISPONIBLE')
    }
    return { success: true, data: { status: 'ready', ...checks } }
  })
}

export default fp(healthPlugin, { name: 'policia-health', fastify: '5.x', dependencies: ['policia-orm'] })
