/**
 * The API explorer and the OpenAPI 3.1 document generated from modules.yaml
 * (SPEC S14): `GET /docs` is Swagger UI, served with its assets by the
 * service itself (no CDN); `GET /docs/json` (and `/docs/yaml`) the document.
 * A client that asks `/docs` for anything but HTML (no `text/html` in
 * `Accept`: curl, scripts, generators) gets the document there too, as before
 * the explorer existed. Nothing under /docs needs a token or is rate
 * limited. What the document says beyond the route schemas:
 * http/openapi-docs.ts.
 */
import fp from 'fastify-plugin'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { documentObject, documentRoute } from '../http/openapi-docs.js'

/** Swagger UI's own assets only; inline styles are how it draws. */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

function wantsHtml (request: FastifyRequest): boolean {
  return /\btext\/html\b/i.test(request.headers.accept ?? '')
}

async function openapiPlugin (app: FastifyInstance): Promise<void> {
  app.decorate('openapiSchemas', new Map<string, TSchema>())
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Registros de Policía Local',
        version: '1',
        description: 'API generada a partir de modules.yaml. Todas las respuestas usan el sobre {success, data} o {success: false, error}.',
      },
      servers: [{ url: '/', description: 'Este servicio (la dirección desde la que se sirve el documento)' }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'El token de POST /auth/login' } } },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: documentRoute,
    transformObject: (d) => documentObject(('openapiObject' in d ? d.openapiObject : d.swaggerObject) as Record<string, unknown>, app.openapiSchemas),
  })
  await app.register(async function docs (scope) {
    // Every route of the explorer: no token, no rate limit, not in the document.
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true, rateLimit: false }
    })
    await scope.register(fastifySwaggerUi, {
      routePrefix: '/docs',
      staticCSP: CSP,
      uiConfig: { validatorUrl: null, deepLinking: true, docExpansion: 'list', persistAuthorization: false },
      uiHooks: {
        onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
          if (request.routeOptions.url?.replace(/\/$/, '') === '/docs' && !wantsHtml(request)) {
            return reply.type('application/json; charset=utf-8').send(app.swagger())
          }
        },
      },
    })
  })
}

export default fp(openapiPlugin, { name: 'policia-openapi', fastify: '5.x' })
