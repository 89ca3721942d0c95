/**
 * TRUST_PROXY as Fastify's `trustProxy` option (SPEC S10, S15). Fastify 5
 * turns a bare hop count into "trust nobody" (it cannot check who the
 * nearest peer is), which made TRUST_PROXY=1 put every client behind the
 * balancer into one rate-limit bucket. A hop count here means what the
 * README documents: the service is reachable only through that many
 * proxies, so the client is the address that many hops back in
 * X-Forwarded-For (the socket peer is hop 0).
 */
import type { FastifyServerOptions } from 'fastify'
import type { TrustProxy } from '../core/config.js'

export function trustProxyOption (value: TrustProxy): FastifyServerOptions['trustProxy'] {
  if (typeof value === 'number') return (_address: string, hop: number) => hop < value
  if (typeof value === 'boolean') return value
  return [...value]
}
