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
import { waitFor } from '../core/backoff.js'
import { redactUrl } from '../core/redact-url.js'

export interface RedisOptions {
  /** Redis not reachable yet: wait and retry with back-off for up to this long (ms; 0: for ever). */
  waitMs?: number
  /** Called at each wait (bin/server.ts then opens the port). */
  onWaiting?: () => void
}

/** Errors that waiting cannot fix: a wrong password or user. */
const fatalConnectError = (err: unknown): boolean => /\b(WRONGPASS|NOAUTH|NOPERM)\b/.test(String((err as Error | undefined)?.message))

/** One attempt: a connected client, or an error (and nothing left open). */
async function connect (app: FastifyInstance, url: string): Promise<Redis> {
  // Our own client, so that closing works whatever its state: @fastify/redis
  // would call quit(), which throws while Redis is unreachable (no offline
  // queue) and would turn a shutdown during an outage into a crash.
  const client = new Redis(url, {
    connectTimeout: 5000,
    commandTimeout: 5000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // Commands issued in the same tick (one admission script per request,
    // stores/admission.ts, from every request that arrived together) leave
    // as one write. Measured without it: Redis 31–40 µs of CPU per GET
    // instead of 14–20, and more on the server (one write per command).
    enableAutoPipelining: true,
    lazyConnect: true,
  })
  client.on('error', (err: Error) => { app.log.warn({ err: { message: err.message } }, 'redis') })
  try {
    await Promise.race([
      client.connect(),
      new Promise((_resolve, reject) => setTimeout(() => { reject(new Error(`Redis at ${redactUrl(url)} did not answer within 10 s`)) }, 10_000).unref()),
    ])
  } catch (err) {
    client.disconnect()
    throw err
  }
  return client
}

async function redisPlugin (app: FastifyInstance, opts: RedisOptions): Promise<void> {
  const url = app.config.redisUrl
  if (url === undefined) return
  const client = opts.waitMs === undefined
    ? await connect(app, url)
    : await waitFor(async () => connect(app, url), {
      what: `Redis at ${redactUrl(url)}`,
      deadlineMs: opts.waitMs,
      fatal: fatalConnectError,
      hint: 'check REDIS_URL (host, port, password) and that Redis is up and reachable from here',
      onWait: (w) => { opts.onWaiting?.(); app.log.warn({ waitingFor: w.what, attempt: w.attempt, reason: w.reason, nextAttemptInMs: w.nextAttemptInMs }, `waiting for ${w.what} (${w.reason}); next attempt in ${w.nextAttemptInMs / 1000} s`) },
    })
  await app.register(fastifyRedis, { client, closeClient: false })
  app.addHook('onClose', async () => {
    if (client.status === 'ready') await client.quit().catch(() => { client.disconnect() })
    else client.disconnect()
  })
}


export default fp(redisPlugin, { name: 'policia-redis', fastify: '5.x', dependencies: ['policia-config'] })
