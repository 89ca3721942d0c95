/**
 * The one place that picks the store implementations (docs/architecture.md
 * "Stores"): Redis (shared by all instances) when a client is given,
 * otherwise in-process (one instance). Each store given in `overrides` is
 * used as it is; only the others are built.
 */
import type { Redis } from 'ioredis'
import { admissionFor, type Admit } from './admission.js'
import type { AttemptLogStore } from './attempt-logs/contract.js'
import type { IdempotencyStore } from './idempotency/contract.js'
import { MemoryIdempotencyStore } from './idempotency/memory.js'
import { RedisIdempotencyStore } from './idempotency/redis.js'
import { MemoryAttemptLogStore } from './attempt-logs/memory.js'
import { RedisAttemptLogStore } from './attempt-logs/redis.js'
import type { RateLimitStore } from './rate-limits/contract.js'
import { MemoryRateLimitStore } from './rate-limits/memory.js'
import { RedisRateLimitStore } from './rate-limits/redis.js'
import type { SequenceStore } from './sequences/contract.js'
import { MemorySequenceStore } from './sequences/memory.js'
import { RedisSequenceStore } from './sequences/redis.js'
import type { SessionStore } from './sessions/contract.js'
import type { SignalStore } from './signals/contract.js'
import { MemorySignalStore } from './signals/memory.js'
import { RedisSignalStore } from './signals/redis.js'
import type { StreamSlotStore } from './stream-slots/contract.js'
import { MemoryStreamSlotStore } from './stream-slots/memory.js'
import { RedisStreamSlotStore } from './stream-slots/redis.js'
import { MemorySessionStore } from './sessions/memory.js'
import { RedisSessionStore } from './sessions/redis.js'

/** The stores, one per concept (stores/<name>/contract.ts). */
export interface StoreSet {
  readonly sequences: SequenceStore
  readonly sessions: SessionStore
  readonly rateLimits: RateLimitStore
  readonly attemptLogs: AttemptLogStore
  readonly signals: SignalStore
  readonly streamSlots: StreamSlotStore
  readonly idempotency: IdempotencyStore
}

export interface Stores extends StoreSet {
  /** A request's rate counters and its session lookup, together (stores/admission.ts). */
  readonly admit: Admit
  readonly kind: 'redis' | 'memory'
  /** Closes what the stores opened: the admission's connection listening to Redis (its pending counts sent first), the id leases (written back and given up). */
  close (): Promise<void>
}

/** Redis stores with every key under `prefix`, or in-process ones when `redis` is undefined; `overrides` replace any of them. */
export function createStores (redis: Redis | undefined, prefix: string, overrides: Partial<StoreSet> = {}): Stores {
  const sequences = overrides.sequences ?? (redis !== undefined ? new RedisSequenceStore(redis, prefix) : new MemorySequenceStore())
  const sessions = overrides.sessions ?? (redis !== undefined ? new RedisSessionStore(redis, prefix) : new MemorySessionStore())
  const rateLimits = overrides.rateLimits ?? (redis !== undefined ? new RedisRateLimitStore(redis, prefix) : new MemoryRateLimitStore())
  const attemptLogs = overrides.attemptLogs ?? (redis !== undefined ? new RedisAttemptLogStore(redis, prefix) : new MemoryAttemptLogStore())
  const signals = overrides.signals ?? (redis !== undefined ? new RedisSignalStore(redis, prefix) : new MemorySignalStore())
  const streamSlots = overrides.streamSlots ?? (redis !== undefined ? new RedisStreamSlotStore(redis, prefix) : new MemoryStreamSlotStore())
  const idempotency = overrides.idempotency ?? (redis !== undefined ? new RedisIdempotencyStore(redis, prefix) : new MemoryIdempotencyStore())
  const admission = admissionFor(rateLimits, sessions)
  return { sequences, sessions, rateLimits, attemptLogs, signals, streamSlots, idempotency, admit: admission.admit, close: async () => { await Promise.all([admission.close(), sequences.close()]) }, kind: redis !== undefined ? 'redis' : 'memory' }
}
