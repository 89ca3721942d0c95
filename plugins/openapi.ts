/** The OpenAPI 3.1 document generated from modules.yaml, served raw at GET /docs (no token). */
import fp from 'fastify-plugin'
import fastifySwagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'

async function openapiPlugin (app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Registros de Policía Local',
        version: '1',
        description: 'API generada a partir de modules.yaml. Todas las respuestas usan el sobre {success, data} o {success: false, error}.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  })
  app.get('/docs', { config: { public: true }, schema: { hide: true } }, async () => app.swagger())
}

export default fp(openapiPlugin, { name: 'policia-openapi', fastify: '5.x' })
