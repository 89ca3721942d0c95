/**
 * Chooses the store implementations: Redis when REDIS_URL is set, otherwise
 * in-process. Tests may hand in stores so that two instances in one process
 * share them the way two processes share Redis.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { MemoryRateLimitStore, MemorySequenceStore, MemorySessionStore } from '../stores/memory-stores.js'
import { RedisRateLimitStore, RedisSequenceStore, RedisSessionStore } from '../stores/redis-stores.js'
import type { RateLimitStore, SequenceStore, SessionStore } from '../stores/types.js'

export interface Stores {
  readonly sequences: SequenceStore
  readonly sessions: SessionStore
  readonly rateLimits: RateLimitStore
  readonly kind: 'redis' | 'memory'
}

declare module 'fastify' {
  interface FastifyInstance {
    stores: Stores
  }
}

export interface StoresOptions {
  stores?: Omit<Stores, 'kind'>
}

async function storesPlugin (app: FastifyInstance, opts: StoresOptions): Promise<void> {
  const prefix = app.config.redisPrefix
  let stores: Stores
  if (opts.stores !== undefined) {
    stores = { ...opts.stores, kind: app.hasDecorator('redis') ? 'redis' : 'memory' }
  } else if (app.hasDecorator('redis')) {
    stores = { sequences: new RedisSequenceStore(app.redis, prefix), sessions: new RedisSessionStore(app.redis, prefix), rateLimits: new RedisRateLimitStore(app.redis, prefix), kind: 'redis' }
  } else {
    stores = { sequences: new MemorySequenceStore(), sessions: new MemorySessionStore(), rateLimits: new MemoryRateLimitStore(), kind: 'memory' }
  }
  app.decorate('stores', Object.freeze(stores))
}

export default fp(storesPlugin, { name: 'policia-stores', fastify: '5.x', dependencies: ['policia-config', 'policia-redis'] })
