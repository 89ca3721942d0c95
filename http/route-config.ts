/** What a route declares in its `config`, read by the auth and generated-route hooks. */
import type { Action } from '../core/registry/types.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Permission action a route needs on its module (asked of the records service before validation). */
    action?: Action
    /** Route needs no token. */
    public?: boolean
    /** false: not rate limited and no RateLimit headers (/health, /ready). */
    rateLimit?: boolean
  }
}

export {}
