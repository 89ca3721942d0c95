/**
 * CORS (docs/operator-guide.md "CORS") through @fastify/cors, only when CORS_ORIGINS names
 * origins: a browser page on one of them may call the API, preflight
 * included; any other origin gets no CORS header (the browser then keeps
 * the answer from the page). Registered before authentication, so a
 * preflight (which carries no token) is answered at once and never counted
 * against the rate limits. Tokens travel in `Authorization`, never in
 * cookies: no credentials mode.
 */
import fp from 'fastify-plugin'
import fastifyCors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

/** Response headers a page may read: the rate-limit figures and the request id. */
const EXPOSED = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id']

async function corsPlugin (app: FastifyInstance): Promise<void> {
  const origins = app.config.corsOrigins
  if (origins.length === 0) return
  const allowed = new Set(origins)
  await app.register(fastifyCors, {
    // false for any other origin: then not even the preflight's method and
    // header lists are sent (an array option would still send those).
    origin: (origin, cb) => { cb(null, origin !== undefined && allowed.has(origin) ? origin : false) },
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    // Last-Event-ID: a stream's resume (docs/user-guide.md "Events: the live stream (eventos)").
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Last-Event-ID'],
    exposedHeaders: EXPOSED,
    credentials: false,
    maxAge: 600,
    // An OPTIONS from an allowed origin is a preflight, with or without
    // Access-Control-Request-Method: the strict mode's refusal is a
    // text/plain 400, outside the envelope (docs/decisions.md "Errors as they happen").
    strictPreflight: false,
  })
}

export default fp(corsPlugin, { name: 'policia-cors', fastify: '5.x', dependencies: ['policia-config'] })
