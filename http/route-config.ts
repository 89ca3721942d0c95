/** What a route declares in its `config`, read by the auth and generated-route hooks. */
import type { Action } from '../core/registry/types.js'
import type { OwnWindow } from './rate-limit.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Permission action a route needs on its module (asked of the records service before validation). */
    action?: Action
    /** Route needs no token. */
    public?: boolean
    /**
     * false: not rate limited and no RateLimit headers (/health). A window
     * name ('docs', 'ready', 'consola'): only that per-IP window of this instance
     * (RATE_LIMIT_DOCS_*, docs/user-guide.md "Rate limits"), not the per-IP and per-token limits.
     */
    rateLimit?: false | OwnWindow
    /** false: RateLimit-* headers only on a 429 (/ready, docs/user-guide.md "Rate limits"). */
    rateLimitHeaders?: boolean
    /** The body is a CSV or NDJSON stream of up to IMPORT_MAX_BYTES, read by the handler (plugins/import-body.ts). */
    importBody?: boolean
    /** The route takes an Idempotency-Key: a repeat answers the first answer (http/idempotency-key.ts). */
    idempotencyKey?: boolean
    /** The body is an evidence file of any type, handed to the handler unread (generate/routes.ts). */
    fileBody?: boolean
    /** Headers every answer of this route carries, errors included, over the security headers (a file's, http/file-answer.ts). */
    headers?: Readonly<Record<string, string>>
  }
}

export {}
