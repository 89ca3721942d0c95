/**
 * The kernel: builds a Fastify instance from the configuration and the
 * module registry. Infrastructure plugins first, then one encapsulated route
 * plugin per module of modules.yaml. The kernel knows no module by name.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { randomUUID } from 'node:crypto'
import type { DestinationStream } from 'pino'
import type { Config } from './core/config.js'
import { loadRegistry } from './core/registry/load.js'
import type { Registry } from './core/registry/types.js'
import configPlugin from './plugins/config.js'
import errorHandler from './plugins/error-handler.js'
import corsPlugin from './plugins/cors.js'
import securityHeaders from './plugins/security-headers.js'
import metricsPlugin from './plugins/metrics.js'
import { sendError } from './http/errors.js'
import { answerClientError } from './http/client-error.js'
import { REQUEST_TIMEOUT_MS } from './http/starting-server.js'
import { trustProxyOption, trustProxyWarning } from './http/trust-proxy.js'
import { loggerOptions } from './http/log-options.js'
import { lazyChildLogger } from './http/lazy-child-logger.js'
import jsonBody, { BODY_LIMIT } from './plugins/json-body.js'
import importBody from './plugins/import-body.js'
import { AJV_OPTIONS } from './http/ajv-options.js'
import redisPlugin from './plugins/redis.js'
import storesPlugin, { type StoresOptions } from './plugins/stores.js'
import ormPlugin, { type OrmPluginOptions } from './plugins/orm.js'
import systemKeys from './plugins/system-keys.js'
import checkpointsPlugin from './plugins/checkpoints.js'
import retentionReview from './plugins/retention-review.js'
import authPlugin from './plugins/auth.js'
import eventsPlugin from './plugins/events.js'
import webhooksPlugin from './plugins/webhooks.js'
import authRoutes from './routes/auth.js'
import auditRoutes from './routes/audit.js'
import myModulesRoutes from './routes/my-modules.js'
import directoryRoutes from './routes/directory.js'
import documentRoutes from './routes/documents.js'
import dataProtectionRoutes from './routes/data-protection.js'
import dataProtectionReviewRoutes from './routes/data-protection-review.js'
import eventRoutes from './routes/events.js'
import recordsPlugin from './plugins/records.js'
import documentsPlugin from './plugins/documents.js'
import filesPlugin from './plugins/files.js'
import sessionsPlugin from './plugins/sessions.js'
import bootstrapAdmin from './plugins/bootstrap-admin.js'
import healthPlugin from './routes/health.js'
import notFound from './plugins/not-found.js'
import methodCollector, { otherMethods } from './plugins/method-not-allowed.js'
import openapi from './plugins/openapi.js'
import consolePlugin from './plugins/console.js'
import { moduleRoutes } from './generate/routes.js'

export interface BuildOptions extends OrmPluginOptions, StoresOptions {
  config: Config
  /** Defaults to the file named by config.modulesFile. */
  registry?: Registry
  /** Pino options, or false for silence (tests); default: http/log-options.ts at config.logLevel. */
  logger?: FastifyServerOptions['logger']
  /** Where the default logger writes (default stdout); tests read the log through it. */
  logStream?: DestinationStream
  /**
   * PostgreSQL or Redis not reachable yet: wait and retry with back-off for
   * up to config.startupWaitMs (0: for ever) instead of failing (bin/server.ts).
   */
  waitForServices?: boolean
  /** Called whenever the start waits for PostgreSQL or Redis (bin/server.ts opens its port then). */
  onWaiting?: () => void
  /** An HTTP server the caller already listens on (bin/server.ts answers on it while the app starts). */
  serverFactory?: FastifyServerOptions['serverFactory']
}


export async function buildApp (options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options
  const registry = options.registry ?? loadRegistry(config.modulesFile)
  const serverOptions: FastifyServerOptions = {
    logger: options.logger ?? loggerOptions(config.logLevel, registry, options.logStream),
    // request.log is made on its first line (most requests write none at LOG_LEVEL=warn).
    childLoggerFactory: lazyChildLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: trustProxyOption(config.trustProxy),
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID()
    },
    requestIdHeader: false,
    // A cold embedded PGlite start plus schema sync can take a while on a busy machine.
    pluginTimeout: 120_000,
    forceCloseConnections: 'idle',
    // For a server Fastify makes itself (tests); bin/server.ts's own server takes them in http/starting-server.ts.
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: REQUEST_TIMEOUT_MS,
    return503OnClosing: true,
    // The message is never shown (validation-errors.ts words `.validation`):
    // Fastify's default would join every error into one string first.
    schemaErrorFormatter: (_errors, context) => new Error(`invalid ${context}`),
    ajv: { customOptions: { ...AJV_OPTIONS } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Errors the router raises before any hook (bad percent-encoding, an id
    // past maxParamLength) leave in the envelope too: no id is that long.
    // They carry the security headers too (plugins/security-headers.ts), which no hook set here.
    frameworkErrors: (err, request, reply) => {
      void app.securityHeaders().catch(() => ({})).then((headers) => {
        void sendError(reply.headers(headers).header('x-request-id', request.id), err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'REGISTRO_NO_ENCONTRADO' : 'DATOS_INVALIDOS')
      })
    },
    // HTTP Node cannot parse, oversized headers: the envelope too (docs/user-guide.md "Errors").
    clientErrorHandler: function (this: FastifyInstance, err, socket) { answerClientError(err, socket, this.log) },
  }
  if (options.serverFactory !== undefined) serverOptions.serverFactory = options.serverFactory
  const wait = options.waitForServices === true ? { waitMs: config.startupWaitMs, ...(options.onWaiting !== undefined && { onWaiting: options.onWaiting }) } : {}
  const app: FastifyInstance = Fastify(serverOptions)
  // Synchronous hooks (here and in the plugins) take `done`: no promise per request.
  // Set first, on the reply's headers, which an error answer keeps too; an
  // onSend hook would add a hook runner to every answer (docs/performance.md
  // "A create runs cold"). Framework errors, answered before any hook, set it themselves.
  app.addHook('onRequest', (request, reply, done) => { void reply.header('x-request-id', request.id); done() })
  try {
    await app.register(configPlugin, { config, registry })
    await app.register(errorHandler)
    // Before any route: it notes every route's path and methods (405 for another method).
    await app.register(methodCollector)
    // Before CORS and authentication: a preflight, a 401 or a 429 carries them too.
    await app.register(securityHeaders)
    await app.register(corsPlugin)
    await app.register(metricsPlugin)
    await app.register(jsonBody)
    await app.register(importBody)
    await app.register(openapi)
    await app.register(redisPlugin, wait)
    await app.register(storesPlugin, { ...(options.stores !== undefined && { stores: options.stores }) })
    await app.register(ormPlugin, {
      ...(options.embedded !== undefined && { embedded: options.embedded }),
      ...(options.embeddedPath !== undefined && { embeddedPath: options.embeddedPath }),
      ...(options.maintenance !== undefined && { maintenance: options.maintenance }),
      ...wait,
    })
    await app.register(systemKeys)
    await app.register(checkpointsPlugin)
    await app.register(retentionReview)
    await app.register(authPlugin)
    await app.register(filesPlugin)
    await app.register(recordsPlugin)
    await app.register(documentsPlugin)
    await app.register(eventsPlugin)
    await app.register(webhooksPlugin)
    await app.register(sessionsPlugin)
    await app.register(notFound)
    await app.register(healthPlugin)
    await app.register(consolePlugin)
    await app.register(authRoutes)
    await app.register(auditRoutes)
    await app.register(myModulesRoutes)
    await app.register(directoryRoutes)
    await app.register(documentRoutes)
    await app.register(dataProtectionRoutes)
    await app.register(dataProtectionReviewRoutes)
    for (const mod of registry.modules) {
      await app.register(moduleRoutes(mod), { prefix: `/${mod.path}` })
    }
    await app.register(eventRoutes)
    // After the last route: every path answers its other methods with 405.
    await app.register(otherMethods)
    await app.register(bootstrapAdmin)
    await app.ready()
    const warning = trustProxyWarning(config.trustProxy)
    if (warning !== undefined) app.log.warn(warning)
  } catch (err) {
    await app.close().catch(() => undefined)
    throw err
  }
  return app
}
