/**
 * Redis connection (REDIS_URL, or the primary REDIS_SENTINELS name:
 * stores/redis-client.ts) through @fastify/redis. Commands fail fast
 * when Redis is unreachable (no offline queue), so a request answers 503
 * instead of hanging. Without either nothing is registered and the stores
 * run in-process. `redisLink` counts reconnections and changes of primary
 * for GET /metrics (docs/operator-guide.md "High availability").
 */
import fp from 'fastify-plugin'
import fastifyRedis from '@fastify/redis'
import type { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { waitFor } from '../core/backoff.js'
import { describeRedis, type RedisTarget } from '../core/redis-config.js'
import { redisClient } from '../stores/redis-client.js'

/** What the connection went through since the start. */
export interface RedisLink {
  /** Connections made ready again after the first. */
  reconnects: number
  /** Reconnections that landed on another server than the one before (a promotion). */
  primaryChanges: number
  /** host:port of the server connected last. */
  primary?: string
}

declare module 'fastify' {
  interface FastifyInstance {
    redisLink: RedisLink
  }
}

export interface RedisOptions {
  /** Redis not reachable yet: wait and retry with back-off for up to this long (ms; 0: for ever). */
  waitMs?: number
  /** Called at each wait (bin/server.ts then opens the port). */
  onWaiting?: () => void
}

/** Errors that waiting cannot fix: a wrong password or user. */
const fatalConnectError = (err: unknown): boolean => /\b(WRONGPASS|NOAUTH|NOPERM)\b/.test(String((err as Error | undefined)?.message))

/** One attempt: a connected client, or an error (and nothing left open). */
async function connect (app: FastifyInstance, target: RedisTarget): Promise<Redis> {
  // Our own client, so that closing works whatever its state: @fastify/redis
  // would call quit(), which throws while Redis is unreachable (no offline
  // queue) and would turn a shutdown during an outage into a crash.
  const client = redisClient(target, {
    connectTimeout: 5000,
    commandTimeout: 5000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // No auto-pipelining: the hot path's commands are already one per turn
    // (core/coalesce.ts), and ioredis builds a Pipeline for every command it
    // auto-pipelines, a fifth of a lone create's CPU (docs/performance.md
    // "Figures behind the code's choices").
    enableAutoPipelining: false,
    lazyConnect: true,
  })
  client.on('error', (err: Error) => { app.log.warn({ err: { message: err.message } }, 'redis') })
  try {
    await Promise.race([
      client.connect(),
      new Promise((_resolve, reject) => setTimeout(() => { reject(new Error(`${describeRedis(target)} did not answer within 10 s`)) }, 10_000).unref()),
    ])
  } catch (err) {
    client.disconnect()
    throw err
  }
  return client
}

async function redisPlugin (app: FastifyInstance, opts: RedisOptions): Promise<void> {
  const target = app.config.redis
  if (target === undefined) return
  const client = opts.waitMs === undefined
    ? await connect(app, target)
    : await waitFor(async () => connect(app, target), {
      what: describeRedis(target),
      deadlineMs: opts.waitMs,
      fatal: fatalConnectError,
      hint: target.kind === 'url' ? 'check REDIS_URL (host, port, password) and that Redis is up and reachable from here' : 'check REDIS_SENTINELS, REDIS_SENTINEL_NAME and the passwords, and that the Sentinels know a primary (redis-cli -p 26379 sentinel get-master-addr-by-name <name>)',
      onWait: (w) => { opts.onWaiting?.(); app.log.warn({ waitingFor: w.what, attempt: w.attempt, reason: w.reason, nextAttemptInMs: w.nextAttemptInMs }, `waiting for ${w.what} (${w.reason}); next attempt in ${w.nextAttemptInMs / 1000} s`) },
    })
  const link: RedisLink = { reconnects: 0, primaryChanges: 0 }
  const serverOf = (): string | undefined => client.stream?.remoteAddress === undefined ? undefined : `${client.stream.remoteAddress}:${client.stream.remotePort ?? ''}`
  link.primary = serverOf()
  client.on('ready', () => {
    const now = serverOf()
    link.reconnects++
    if (now !== link.primary) {
      link.primaryChanges++
      app.log.warn({ redis: { from: link.primary, to: now } }, 'redis: connected to another primary (a failover)')
    }
    link.primary = now
  })
  app.decorate('redisLink', link)
  await app.register(fastifyRedis, { client, closeClient: false })
  app.addHook('onClose', async () => {
    if (client.status === 'ready') await client.quit().catch(() => { client.disconnect() })
    else client.disconnect()
  })
}


export default fp(redisPlugin, { name: 'policia-redis', fastify: '5.x', dependencies: ['policia-config'] })
