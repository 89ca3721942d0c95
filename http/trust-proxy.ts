/**
 * TRUST_PROXY as Fastify's `trustProxy` option (docs/operator-guide.md "Client address and TRUST_PROXY"). Addresses
 * and CIDRs go to Fastify as they are (@fastify/proxy-addr): X-Forwarded-For
 * is read only when the connection comes from one of them, walking back
 * through trusted hops only, so a client that reaches an instance directly
 * is counted by its own address.
 *
 * A hop count is kept for compatibility and means what it meant: the
 * client is the address that many hops back in X-Forwarded-For (the socket
 * peer is hop 0), whoever the peer is. (Fastify 5 turns a bare count into
 * "trust nobody", which would put every client behind the balancer into
 * one rate-limit bucket.) It is forgeable by any client that can reach the
 * instance without the proxy, hence the warning at start.
 */
import type { FastifyServerOptions } from 'fastify'
import type { TrustProxy } from '../core/config.js'

export function trustProxyOption (value: TrustProxy): FastifyServerOptions['trustProxy'] {
  if (typeof value === 'number') return (_address: string, hop: number) => hop < value
  if (typeof value === 'boolean') return value
  return [...value]
}

/** What the start logs when TRUST_PROXY trusts peers it cannot tell from clients. */
export function trustProxyWarning (value: TrustProxy): string | undefined {
  if (typeof value === 'number') return `TRUST_PROXY=${value} is a hop count: a client that reaches this instance without the proxy can choose its address with X-Forwarded-For (and escape the per-IP limit); name the proxies' addresses instead, for example TRUST_PROXY=10.0.0.0/8,127.0.0.1`
  if (value === true) return 'TRUST_PROXY=true trusts X-Forwarded-For from every peer: any client can choose its address; name the proxies\' addresses instead, for example TRUST_PROXY=10.0.0.0/8,127.0.0.1'
  return undefined
}
