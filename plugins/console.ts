/**
 * The console (docs/user-guide.md "Console", docs/architecture.md
 * "The console"): the bundle Vite built in console/dist, served from memory
 * at /consola (index.html) and /consola/assets/* (names that carry their
 * hash, so a browser keeps them a year). No token, and a per-IP window of
 * their own (docs/user-guide.md "Rate limits": a station's officers opening
 * the console together are not the limit of logins); its own CSP: scripts,
 * styles and requests to this service only, nothing inline, no framing.
 * A start without a bundle logs how to build it and answers 503 there.
 */
import type { HelmetOptions } from 'helmet'
import fp from 'fastify-plugin'
import { join } from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { loadBundle, packageRoot, type BundleFile } from '../http/static-bundle.js'
import { notModified } from '../http/document-etag.js'
import { sendError } from '../http/errors.js'

export const CONSOLE_HELMET: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      // blob: for a file's preview, fetched with the token (console/src/record-files.tsx); no other origin.
      imgSrc: ["'self'", 'data:', 'blob:'],
      frameSrc: ['blob:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      manifestSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
      frameAncestors: ["'none'"],
      objectSrc: ["'none'"],
    },
  },
}

const YEAR = 'public, max-age=31536000, immutable'

function send (request: FastifyRequest, reply: FastifyReply, file: BundleFile, cache: string): FastifyReply {
  void reply.header('etag', file.etag).header('cache-control', cache).header('vary', 'Accept-Encoding')
  if (notModified(request.headers['if-none-match'], file.etag)) return reply.code(304).send()
  const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))
  if (gzip) void reply.header('content-encoding', 'gzip')
  return reply.type(file.type).send(gzip ? file.gzip : file.body)
}

async function consolePlugin (app: FastifyInstance): Promise<void> {
  const dir = join(packageRoot(), 'console', 'dist')
  const bundle = loadBundle(dir)
  if (bundle === undefined) app.log.warn({ dir }, 'console not built: run npm run build:console (npm install and npm start build it)')
  const missing = (reply: FastifyReply): FastifyReply => sendError(reply, 'SERVICIO_NO_DISPONIBLE', [{ campo: 'consola', mensaje: 'sin construir: npm run build:console' }])
  const config = { public: true, rateLimit: 'consola', helmet: CONSOLE_HELMET } as const
  const schema = { hide: true }

  app.get('/consola', { config, schema }, async (request, reply) => {
    const index = bundle?.get('index.html')
    // Revalidated on every load: it names the assets of the current build.
    return index === undefined ? missing(reply) : send(request, reply, index, 'no-cache')
  })
  app.get('/consola/assets/*', { config, schema }, async (request, reply) => {
    if (bundle === undefined) return missing(reply)
    const file = bundle.get(`assets/${(request.params as { '*': string })['*']}`)
    return file === undefined ? sendError(reply, 'RUTA_NO_ENCONTRADA') : send(request, reply, file, YEAR)
  })
}

export default fp(consolePlugin, { name: 'policia-console', fastify: '5.x', dependencies: ['policia-security-headers', 'policia-auth'] })
