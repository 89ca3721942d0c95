/**
 * Rate limits (SPEC S10): per client IP (50/minute) and per token
 * (1000/hour) by default, counted in fixed windows in the shared store so
 * every instance counts together. The counting itself rides along with the
 * session lookup in plugins/auth.ts (one Redis round trip per request);
 * this file decides what the counts mean and which headers say so.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../core/errors.js'
import type { Config } from '../core/config.js'
import type { AttemptLog, AttemptResult, Counter, RateLimitStore, Window } from '../stores/types.js'

export interface Limit extends Window {
  readonly max: number
}

/** The per-IP limit of SPEC S10, or none for an address of RATE_LIMIT_IP_EXEMPT (S21). */
export function ipLimit (request: FastifyRequest, config: Config): Limit | undefined {
  if (config.rateLimit.ipExempt.includes(request.ip)) return undefined
  return { key: `ip:${request.ip}`, windowMs: config.rateLimit.ipWindowMs, max: config.rateLimit.ipMax }
}

/**
 * The per-IP window of /docs* or /ready (SPEC S21), apart from the S10
 * limits and from each other; none for an exempt address.
 */
export function ownWindowLimit (name: 'docs' | 'ready', request: FastifyRequest, config: Config): Limit | undefined {
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

/**
 * Failed logins of one username (SPEC S15), in sliding windows: 10 from one
 * client address within 15 minutes lock that username for that address;
 * 100 from any addresses lock it for everyone (so a stranger cannot lock
 * the superadmin out, and a spread-out guesser still meets a wall).
 */
export const LOGIN_LOCK = { perAddress: 10, total: 100, windowMs: 15 * 60_000 } as const

export interface LoginLogs {
  /** This username from this client address. */
  readonly address: AttemptLog
  /** This username from anywhere. */
  readonly total: AttemptLog
  /** The set of every log of this username (each address's and the total), for `desbloquear`. */
  readonly index: string
}

/** Encoded code unit by code unit (UTF-16, base64url): no username, known
 * or not, can name another one's log, and any string encodes (a lone
 * surrogate included, which encodeURIComponent refuses). */
function userKey (username: string): string {
  return `login:${Buffer.from(username.toLowerCase(), 'utf16le').toString('base64url')}`
}

export function loginLogs (username: string, ip: string): LoginLogs {
  const user = userKey(username)
  return {
    address: { key: `${user}:ip:${ip}`, windowMs: LOGIN_LOCK.windowMs, max: LOGIN_LOCK.perAddress },
    total: { key: user, windowMs: LOGIN_LOCK.windowMs, max: LOGIN_LOCK.total },
    index: `${user}:logs`,
  }
}

/**
 * Lifts the lock-out of one username on every address (SPEC S13,
 * `POST /usuarios/{id}/desbloquear`): forgets its total log and every
 * per-address log, atomically. Returns how many logs held failures.
 */
export async function unlockLogin (store: RateLimitStore, username: string): Promise<number> {
  const user = userKey(username)
  return store.clear(`${user}:logs`, [user])
}

/** 429 `Demasiadas peticiones` with Retry-After when the attempt was refused. */
export function lockedOut (result: AttemptResult): AppError | undefined {
  if (result.allowed) return undefined
  return new AppError('DEMASIADAS_PETICIONES', undefined, { 'retry-after': seconds(result.retryMs) })
}
