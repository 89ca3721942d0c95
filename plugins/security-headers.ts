/**
 * Security headers (docs/operator-guide.md "Security headers") through @fastify/helmet: every response,
 * errors, 401s, 429s and CORS preflights included, says `nosniff`,
 * `Referrer-Policy: no-referrer` and denies framing (`X-Frame-Options:
 * DENY` and CSP `frame-ancestors 'none'`); HSTS only with HSTS=true (a
 * service reached over plain HTTP behind nginx must not send it). The API
 * answers JSON that no browser should render, so its CSP allows nothing;
 * the explorer under /docs sets a CSP of its own (plugins/openapi.ts).
 *
 * `Cache-Control: no-store` is set here too (helmet has no cache header
 * since v4): responses carry DNIs, and no browser or shared cache may keep
 * them. Routes that may be cached (the OpenAPI document, the explorer's
 * static assets) say so themselves.
 */
import fp from 'fastify-plugin'
import fastifyHelmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's security headers as helmet sends them, for answers sent without hooks (router errors). */
    securityHeaders (): Promise<Record<string, string>>
  }
}

/** Of a response, the headers that are not about this one response. */
const OWN = /^(?:date|connection|keep-alive|content-(?:type|length|encoding)|transfer-encoding|x-request-id|ratelimit-.*|retry-after|etag|vary)$/

/** A JSON API loads nothing and is framed by nobody. */
const API_CSP = { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } }

/** One year; no includeSubDomains: the force's other sites under the same domain are not ours to bind to HTTPS. */
const HSTS = { maxAge: 31_536_000, includeSubDomains: false }

async function securityHeaders (app: FastifyInstance): Promise<void> {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: API_CSP,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: app.config.hsts ? HSTS : false,
  })
  app.addHook('onRequest', (_request, reply, done) => {
    // On the raw response, like helmet's: kept when an error is answered.
    reply.raw.setHeader('cache-control', 'no-store')
    done()
  })
  // Fastify answers a malformed URL (frameworkErrors) before any hook runs:
  // the headers are copied once from what helmet sent on /health.
  let copied: Record<string, string> | undefined
  app.decorate('securityHeaders', async () => {
    if (copied !== undefined) return copied
    const res = await app.inject({ url: '/health' })
    copied = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !OWN.test(name)).map(([name, value]) => [name, String(value)]))
    return copied
  })
}

export default fp(securityHeaders, { name: 'policia-security-headers', fastify: '5.x', dependencies: ['policia-config'] })
