/**
 * The API explorer and the OpenAPI 3.1 document generated from modules.yaml
 * (docs/user-guide.md "API explorer and OpenAPI document"): `GET /docs` is Swagger UI, served with its assets by the
 * service itself (no CDN); `GET /docs/json` (and `/docs/yaml`) the document.
 * A client that asks `/docs` for anything but HTML (no `text/html` in
 * `Accept`: curl, scripts, generators) gets the document there too, as before
 * the explorer existed. The document is built on its first request, once per start, and answered
 * with its ETag (a revalidation is 304, docs/operator-guide.md "Security headers"). Nothing under /docs needs
 * a token; it has a per-IP window of its own (plugins/auth.ts), not the
 * normal limits. What the document says beyond the route schemas:
 * http/openapi-docs.ts.
 */
import type { HelmetOptions } from 'helmet'
import fp from 'fastify-plugin'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { documentObject, documentRoute, newNotes } from '../http/openapi-docs.js'
import { notModified, taggedDocument, type TaggedDocument } from '../http/document-etag.js'

/** Swagger UI's own assets only (helmet's route options); inline styles are how it draws. */
const DOCS_HELMET: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
}

/** The document has no personal data: a client may keep it, asking each time whether it changed. */
function sendDocument (request: FastifyRequest, reply: FastifyReply, doc: TaggedDocument, type: string): FastifyReply {
  void reply.header('etag', doc.etag).header('cache-control', 'no-cache')
  if (notModified(request.headers['if-none-match'], doc.etag)) return reply.code(304).send()
  return reply.type(type).send(doc.body)
}

function wantsHtml (request: FastifyRequest): boolean {
  return /\btext\/html\b/i.test(request.headers.accept ?? '')
}

async function openapiPlugin (app: FastifyInstance): Promise<void> {
  app.decorate('openapiSchemas', new Map<string, TSchema>())
  // What the document says of each operation beyond its schema, noted as the routes are documented (http/openapi-docs.ts).
  const notes = newNotes()
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Registros de Policía Local',
        version: '1',
        description: 'API generada a partir de modules.yaml. Todas las respuestas usan el sobre {success, data} o {success: false, error, codigo}.',
      },
      servers: [{ url: '/', description: 'Este servicio (la dirección desde la que se sirve el documento)' }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'El token de POST /auth/login' } } },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: (route) => documentRoute(route, notes),
    transformObject: (d) => documentObject(('openapiObject' in d ? d.openapiObject : d.swaggerObject) as Record<string, unknown>, app.openapiSchemas, notes),
  })
  // Built on the first request for each, then kept: with the shipped
  // modules.yaml about 0.65 s of CPU for the JSON and 1.2 s for the YAML,
  // which every start paid, and most instances are never asked for either
  // (docs/decisions.md "The OpenAPI document on first request").
  let json: TaggedDocument | undefined
  let yaml: TaggedDocument | undefined
  const jsonDocument = (): TaggedDocument => (json ??= taggedDocument(JSON.stringify(app.swagger())))
  const yamlDocument = (): TaggedDocument => (yaml ??= taggedDocument(app.swagger({ yaml: true })))
  await app.register(async function docs (scope) {
    // Every route of the explorer: no token, the /docs window only, its own CSP (helmet reads config.helmet), not in the document.
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true, rateLimit: 'docs', helmet: DOCS_HELMET } as typeof route.config
    })
    await scope.register(fastifySwaggerUi, {
      routePrefix: '/docs',
      // Sections closed and a filter by section: a dozen modules make a document of a few MB, whose every
      // operation open at once took Swagger UI 20 s or more (docs/user-guide.md "API explorer").
      uiConfig: { validatorUrl: null, deepLinking: true, docExpansion: 'none', filter: true, persistAuthorization: false },
      uiHooks: {
        onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
          const url = request.routeOptions.url?.replace(/\/$/, '')
          // /docs is the page or the document by Accept: no cache may give one for the other.
          if (url === '/docs') void reply.header('vary', 'Accept')
          if (url === '/docs/json' || (url === '/docs' && !wantsHtml(request))) return sendDocument(request, reply, jsonDocument(), 'application/json; charset=utf-8')
          if (url === '/docs/yaml') return sendDocument(request, reply, yamlDocument(), 'application/x-yaml')
        },
      },
    })
  })
}

export default fp(openapiPlugin, { name: 'policia-openapi', fastify: '5.x' })
