/**
 * Security headers (docs/operator-guide.md "Security headers") through helmet: every response,
 * errors, 401s, 429s and CORS preflights included, says `nosniff`,
 * `Referrer-Policy: no-referrer` and denies framing (`X-Frame-Options:
 * DENY` and CSP `frame-ancestors 'none'`); HSTS only with HSTS=true (a
 * service reached over plain HTTP behind nginx must not send it). The API
 * answers JSON that no browser should render, so its CSP allows nothing;
 * a route may set its own helmet options in `config.helmet`, merged over
 * these (the explorer under /docs, plugins/openapi.ts; the console,
 * plugins/console.ts), and headers of its own in `config.headers`, set
 * over all of these (a file's answer: its sandbox CSP, http/file-answer.ts).
 *
 * helmet itself, not @fastify/helmet: the plugin builds a new helmet() on
 * every request (its options parsed, the CSP string joined), a tenth of a
 * GET's CPU (docs/performance.md "W1"; docs/decisions.md "Security headers
 * made once"). Here helmet sets its headers once per configuration, on a
 * response that records them, and each request copies that list.
 *
 * `Cache-Control: no-store` is set here too (helmet has no cache header
 * since v4): responses carry DNIs, and no browser or shared cache may keep
 * them. Routes that may be cached (the OpenAPI document, the explorer's
 * static assets) say so themselves.
 */
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import '../http/route-config.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's security headers, for answers sent without hooks (router errors). */
    securityHeaders (): Promise<Record<string, string>>
  }
  interface FastifyContextConfig {
    /** This route's helmet options, merged over the API's. */
    helmet?: HelmetOptions
  }
}

type Headers = Readonly<Record<string, string>>

/** A JSON API loads nothing and is framed by nobody. */
const API_CSP = { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } }

/** One year; no includeSubDomains: the force's other sites under the same domain are not ours to bind to HTTPS. */
const HSTS = { maxAge: 31_536_000, includeSubDomains: false }

/** The headers helmet sets for `options`, with ours and `over`: helmet's middleware run once on a response that records them. */
function headersOf (options: HelmetOptions, over: Readonly<Record<string, string>> = {}): Headers {
  const set = new Map<string, string>()
  const recorder = { setHeader (name: string, value: unknown) { set.set(name.toLowerCase(), String(value)) }, removeHeader () {} }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => { if (err !== undefined) throw err })
  set.set('cache-control', 'no-store')
  for (const [name, value] of Object.entries(over)) set.set(name.toLowerCase(), value)
  return Object.freeze(Object.fromEntries(set))
}

async function securityHeaders (app: FastifyInstance): Promise<void> {
  const api: HelmetOptions = {
    contentSecurityPolicy: API_CSP,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: app.config.hsts ? HSTS : false,
  }
  const apiHeaders = headersOf(api)
  /** A route's own options, made into headers on its first request. */
  const byRoute = new WeakMap<object, Headers>()
  const headersFor = (config: FastifyContextConfig): Headers => {
    const { helmet: own, headers } = config
    if (own === undefined && headers === undefined) return apiHeaders
    let h = byRoute.get(config)
    if (h === undefined) byRoute.set(config, h = headersOf({ ...api, ...own } as HelmetOptions, headers))
    return h
  }
  app.addHook('onRequest', (request, reply, done) => {
    // Fastify's reply headers, not the raw response's: an error answer keeps
    // them too (Fastify's error handler drops only content-type and
    // -length), and while nothing is set on the raw response node writes
    // the reply's headers as they are instead of setting them one by one.
    void reply.headers(headersFor(request.routeOptions.config))
    done()
  })
  // Fastify answers a malformed URL (frameworkErrors) before any hook runs.
  app.decorate('securityHeaders', async () => apiHeaders)
}

export default fp(securityHeaders, { name: 'policia-security-headers', fastify: '5.x', dependencies: ['policia-config'] })
