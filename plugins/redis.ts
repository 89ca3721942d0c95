/**
 * Redis connection (REDIS_URL) through @fastify/redis. Commands fail fast
 * when Redis is unreachable (no offline queue), so a request answers 503
 * instead of hanging. Without REDIS_URL nothing is registered and the stores
 * run in-process.
 */
import fp from 'fastify-plugin'
import fastifyRedis from '@fastify/redis'
import { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'

async function redisPlugin (app: FastifyInstance): Promise<void> {
  const url = app.config.redisUrl
  if (url === undefined) return
  // Our own client, so that closing works whatever its state: @fastify/redis
  // would call quit(), which throws while Redis is unreachable (no offline
  // queue) and would turn a shutdown during an outage into a crash.
  const client = new Redis(url, {
    connectTimeout: 5000,
    commandTimeout: 5000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // Commands issued in the same tick (rate counters and session lookup)
    // leave as one write: one round trip per request.
    enableAutoPipelining: true,
    lazyConnect: true,
  })
  client.on('error', (err: Error) => { app.log.warn({ err: { message: err.message } }, 'redis') })
  try {
    await Promise.race([
      client.connect(),
      new Promise((_resolve, reject) => setTimeout(() => { reject(new Error(`Redis at ${redact(url)} did not answer within 10 s`)) }, 10_000).unref()),
    ])
  } catch (err) {
    client.disconnect()
    throw err
  }
  await app.register(fastifyRedis, { client, closeClient: false })
  app.addHook('onClose', async () => {
    if (client.status === 'ready') await client.quit().catch(() => { client.disconnect() })
    else client.disconnect()
  })
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
