/**
 * A client of the shared Redis (core/redis-config.ts): REDIS_URL's server,
 * or the primary of a Sentinel group. With Sentinels, ioredis asks them for
 * the primary at every (re)connection and checks its role; a primary that
 * was demoted but still answers (a switchover, a stalled primary coming
 * back) refuses writes with READONLY, on which the client reconnects, so
 * every store follows the new primary without a restart. Each reconnection
 * emits 'ready', after which the stores distrust what they cached
 * (stores/sequences/redis.ts, stores/sessions/redis.ts). ioredis's
 * `failoverDetector` (ioredis 6.0) is left off: with it, in both runs of
 * test/faults/redis-failover.test.ts, one instance of three stopped
 * reconnecting after the kill and stayed unready; without it, none did.
 */
import { Redis, type RedisOptions } from 'ioredis'
import type { RedisTarget } from '../core/redis-config.js'

export function redisClient (target: RedisTarget, options: RedisOptions): Redis {
  if (target.kind === 'url') return new Redis(target.url, options)
  return new Redis({
    ...options,
    sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: target.name,
    role: 'master',
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
    // The Sentinels answer fast or not at all: the next one is tried.
    sentinelCommandTimeout: 2000,
    ...(target.sentinelPassword !== undefined && { sentinelPassword: target.sentinelPassword }),
    ...(target.password !== undefined && { password: target.password }),
  })
}
