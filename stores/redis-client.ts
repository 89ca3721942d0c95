/**
 * A client of the shared Redis (core/redis-config.ts): REDIS_URL's server,
 * or the primary of a Sentinel group. With Sentinels, ioredis asks them for
 * the primary at every (re)connection and, with `failoverDetector`, drops
 * its connections as soon as they announce a promotion (`+switch-master`),
 * so every store follows the new primary without a restart; each
 * reconnection emits 'ready', after which the stores distrust what they
 * cached (stores/sequences/redis.ts, stores/sessions/redis.ts).
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
    failoverDetector: true,
    // The Sentinels answer fast or not at all: the next one is tried.
    sentinelCommandTimeout: 2000,
    ...(target.sentinelPassword !== undefined && { sentinelPassword: target.sentinelPassword }),
    ...(target.password !== undefined && { password: target.password }),
  })
}
