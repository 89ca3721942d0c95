/**
 * Rate limits (docs/user-guide.md "Rate limits"): per token (1000/hour) for a request whose
 * token verifies, per client IP (50/minute) for any other, by default,
 * counted in fixed windows in the shared store so
 * every instance counts together. The counting itself rides along with the
 * session lookup in plugins/auth.ts (one Redis round trip per request);
 * this file decides what the counts mean and which headers say so.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../core/errors.js'
import type { Config } from '../core/config.js'
import type { Counter, Window } from '../stores/rate-limits/contract.js'

/** The routes counted in a per-IP window of their own, each apart (http/route-config.ts). */
export type OwnWindow = 'docs' | 'ready' | 'consola'

export interface Limit extends Window {
  readonly max: number
}

/** The per-IP limit of docs/user-guide.md "Rate limits", or none for an address of RATE_LIMIT_IP_EXEMPT (docs/operator-guide.md "Client address and TRUST_PROXY"). */
export function ipLimit (request: FastifyRequest, config: Config): Limit | undefined {
  if (config.rateLimit.ipExempt.includes(request.ip)) return undefined
  return { key: `ip:${request.ip}`, windowMs: config.rateLimit.ipWindowMs, max: config.rateLimit.ipMax }
}

/**
 * The per-IP window of /docs*, /ready or the console's files (docs/user-guide.md "Rate limits"),
 * apart from the per-IP and per-token limits and from each other; none for
 * an exempt address.
 */
export function ownWindowLimit (name: OwnWindow, request: FastifyRequest, config: Config): Limit | undefined {
  if (config.rateLimit.ipExempt.includes(request.ip)) return undefined
  return { key: `${name}:${request.ip}`, windowMs: config.rateLimit.docsWindowMs, max: config.rateLimit.docsMax }
}

export function tokenLimit (jti: string, config: Config): Limit {
  return { key: `tok:${jti}`, windowMs: config.rateLimit.tokenWindowMs, max: config.rateLimit.tokenMax }
}

const seconds = (ms: number): string => String(Math.max(1, Math.ceil(ms / 1000)))

/**
 * Sets `RateLimit-Limit`, `-Remaining` and `-Reset` from the tightest limit
 * and throws 429 `Demasiadas peticiones` with `Retry-After` when any is
 * exceeded.
 */
export function enforce (reply: FastifyReply, limits: readonly Limit[], counters: readonly Counter[]): void {
  let shown = 0
  let exceeded: number | undefined
  limits.forEach((l, i) => {
    const c = counters[i]!
    const remaining = l.max - c.count
    const best = limits[shown]!.max - counters[shown]!.count
    if (remaining < best || (remaining === best && c.resetMs > counters[shown]!.resetMs)) shown = i
    if (c.count > l.max && (exceeded === undefined || c.resetMs > counters[exceeded]!.resetMs)) exceeded = i
  })
  const i = exceeded ?? shown
  const headers = {
    'ratelimit-limit': String(limits[i]!.max),
    'ratelimit-remaining': String(Math.max(0, limits[i]!.max - counters[i]!.count)),
    'ratelimit-reset': seconds(counters[i]!.resetMs),
  }
  if (exceeded !== undefined) {
    throw new AppError('DEMASIADAS_PETICIONES', undefined, { ...headers, 'retry-after': seconds(counters[i]!.resetMs) })
  }
  void reply.headers(headers)
}
