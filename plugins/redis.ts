/**
 * Redis connection (REDIS_URL) through @fastify/redis. Commands fail fast
 * when Redis is unreachable (no offline queue), so a request answers 503
 * instead of hanging. Without REDIS_URL nothing is registered and the stores
 * run in-process.
 */
import fp from 'fastify-plugin'
import fastifyRedis from '@fastify/redis'
import type { FastifyInstance } from 'fastify'

async function redisPlugin (app: FastifyInstance): Promise<void> {
  const url = app.config.redisUrl
  if (url === undefined) return
  await app.register(fastifyRedis, {
    url,
    connectTimeout: 5000,
    commandTimeout: 5000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // Commands issued in the same tick (rate counters and session lookup)
    // leave as one write: one round trip per request.
    enableAutoPipelining: true,
    lazyConnect: false,
  })
  // With no offline queue, wait for the first connection before serving.
  if (app.redis.status !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`Redis at ${redact(url)} did not answer within 10 s`)) }, 10_000)
      app.redis.once('ready', () => { clearTimeout(timer); resolve() })
    })
  }
}

/** A URL without its password, fit for a log line. */
export function redact (url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return '(unparseable URL)'
  }
}

export default fp(redisPlugin, { name: 'policia-redis', fastify: '5.x', dependencies: ['policia-config'] })
