/**
 * The one place that picks the store implementations: Redis (shared by all
 * instances) when a client is given, otherwise in-process (one instance).
 */
import type { Redis } from 'ioredis'
import { MemoryRateLimitStore, MemorySequenceStore, MemorySessionStore } from './memory-stores.js'
import { RedisRateLimitStore, RedisSequenceStore, RedisSessionStore } from './redis-stores.js'
import type { RateLimitStore, SequenceStore, SessionStore } from './types.js'

export interface Stores {
  readonly sequences: SequenceStore
  readonly sessions: SessionStore
  readonly rateLimits: RateLimitStore
  readonly kind: 'redis' | 'memory'
}

/** Redis stores with every key under `prefix`, or in-process ones when `redis` is undefined. */
export function createStores (redis: Redis | undefined, prefix: string): Stores {
  if (redis !== undefined) {
    return { sequences: new RedisSequenceStore(redis, prefix), sessions: new RedisSessionStore(redis, prefix), rateLimits: new RedisRateLimitStore(redis, prefix), kind: 'redis' }
  }
  return { sequences: new MemorySequenceStore(), sessions: new MemorySessionStore(), rateLimits: new MemoryRateLimitStore(), kind: 'memory' }
}
