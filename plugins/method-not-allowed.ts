/**
 * A method that a known path does not have (docs/user-guide.md "Errors"):
 * 405 `Método no permitido` in the envelope, with `Allow` naming the
 * methods the path has (HEAD wherever GET is, OPTIONS where a CORS
 * preflight is answered). An unknown path stays a 404 (plugins/not-found.ts).
 *
 * Public Fastify only: every method Node parses is made routable
 * (`addHttpMethod`), `collectMethods` notes each route's path and methods
 * as it is added (an `onRoute` hook, registered before any route), and
 * `answerOtherMethods`, registered after the last route, gives each path
 * one more route for every other method. That route answers in its own
 * onRequest hook: after the app's hooks, so the token is checked first as
 * for a 404 (docs/decisions.md), and before a body is read.
 */
import { METHODS } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import { AppError } from '../core/errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Each route path's methods and config, as added (plugins/method-not-allowed.ts). */
    routeMethods: RouteMethods
  }
}

interface RouteMethods {
  readonly byPath: Map<string, { methods: Set<string>, config: FastifyContextConfig | undefined }>
  /** Methods a wildcard route answers on every path (the CORS preflight). */
  readonly everywhere: Set<string>
  /** Set once the routes of other methods are added: those are not noted. */
  closed: boolean
}

/** CONNECT never reaches a route: Node hands it to the server's `connect` event. */
const ROUTABLE = METHODS.filter((m) => m !== 'CONNECT')
/** The order `Allow` lists them in: the common ones first. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const rank = (m: string): number => ORDER.includes(m) ? ORDER.indexOf(m) : ORDER.length

/** `/denuncias/` and `/denuncias` are one path to the router (ignoreTrailingSlash, app.ts). */
const normal = (url: string): string => url.length > 1 ? url.replace(/\/+$/, '') : url

async function collectMethods (app: FastifyInstance): Promise<void> {
  for (const m of ROUTABLE) if (!app.supportedMethods.includes(m)) app.addHttpMethod(m)
  const seen: RouteMethods = { byPath: new Map(), everywhere: new Set(), closed: false }
  app.decorate('routeMethods', seen)
  app.addHook('onRoute', (route) => {
    if (seen.closed) return
    const methods = [route.method].flat()
    if (route.url === '*' || route.url === '/*') { methods.forEach((m) => seen.everywhere.add(m)); return }
    const path = normal(route.url)
    const entry = seen.byPath.get(path) ?? { methods: new Set<string>(), config: route.config }
    methods.forEach((m) => entry.methods.add(m))
    seen.byPath.set(path, entry)
  })
}

/** What a route of another method keeps of the path's own config: who may call it and which window counts it. */
function configOf (own: FastifyContextConfig | undefined): FastifyContextConfig {
  const { public: open, rateLimit, rateLimitHeaders, helmet } = own ?? {}
  return { ...(open !== undefined && { public: open }), ...(rateLimit !== undefined && { rateLimit }), ...(rateLimitHeaders !== undefined && { rateLimitHeaders }), ...(helmet !== undefined && { helmet }) } as FastifyContextConfig
}

async function answerOtherMethods (app: FastifyInstance): Promise<void> {
  const { byPath, everywhere } = app.routeMethods
  app.routeMethods.closed = true
  for (const [url, { methods, config }] of [...byPath]) {
    const has = new Set([...methods, ...(methods.has('GET') ? ['HEAD'] : []), ...everywhere])
    const allow = [...has].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).join(', ')
    // OPTIONS too where CORS answers it: a real preflight is answered by its hook before this route's.
    const others = ROUTABLE.filter((m) => !methods.has(m) && !(m === 'HEAD' && methods.has('GET')))
    if (others.length === 0) continue
    app.route({
      method: others,
      url,
      exposeHeadRoute: false,
      config: configOf(config),
      schema: { hide: true },
      onRequest: (_request, _reply, done) => { done(new AppError('METODO_NO_PERMITIDO', undefined, { allow })) },
      handler: async () => { throw new AppError('METODO_NO_PERMITIDO', undefined, { allow }) },
    })
  }
}

export default fp(collectMethods, { name: 'policia-method-collector', fastify: '5.x' })

export const otherMethods = fp(answerOtherMethods, { name: 'policia-method-not-allowed', fastify: '5.x', dependencies: ['policia-method-collector', 'policia-error-handler'] })
