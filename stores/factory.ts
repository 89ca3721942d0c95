/**
 * The one place that picks the store implementations: Redis (shared by all
 * instances) when a client is given, otherwise in-process (one instance).
 */
import type { Redis } from 'ioredis'
import { MemoryRateLimitStore, MemorySequenceStore, MemorySessionStore } from './memory-stores.js'
import { RedisRateLimitStore, RedisSequenceStore, RedisSessionStore } from './redis-stores.js'
import type { RateLimitStore, SequenceStore, SessionStore } from './types.js'
import { admitFor, type Admit } from './admission.js'

export interface Stores {
  readonly sequences: SequenceStore
  readonly sessions: SessionStore
  readonly rateLimits: RateLimitStore
  /** A request's rate counters and its session lookup, together (stores/admission.ts). */
  readonly admit: Admit
  readonly kind: 'redis' | 'memory'
}

/** Redis stores with every key under `prefix`, or in-process ones when `redis` is undefined. */
export function createStores (redis: Redis | undefined, prefix: string): Stores {
  if (redis !== undefined) {
    const sessions = new RedisSessionStore(redis, prefix)
    const rateLimits = new RedisRateLimitStore(redis, prefix)
    return { sequences: new RedisSequenceStore(redis, prefix), sessions, rateLimits, admit: admitFor(rateLimits, sessions), kind: 'redis' }
  }
  const sessions = new MemorySessionStore()
  const rateLimits = new MemoryRateLimitStore()
  return { sequences: new MemorySequenceStore(), sessions, rateLimits, admit: admitFor(rateLimits, sessions), kind: 'memory' }
}
