/**
 * Redis stores shared by every instance. Counter updates are single Lua
 * scripts (atomic); every key lives under the configured namespace.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Counter, RateLimitStore, SequenceStore, SessionLookup, SessionState, SessionStore, UserSnapshot, Window } from './types.js'

const NEXT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('INCR', KEYS[1])`

const SEED_AND_NEXT = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if cur < floor then redis.call('SET', KEYS[1], floor) end
return redis.call('INCR', KEYS[1])`

interface SequenceCommands {
  policiaSeqNext (key: string): Promise<number>
  policiaSeqSeed (key: string, floor: number): Promise<number>
}

export class RedisSequenceStore implements SequenceStore {
  private readonly redis: Redis & SequenceCommands

  constructor (redis: Redis, private readonly prefix: string) {
    if (typeof (redis as Partial<SequenceCommands>).policiaSeqNext !== 'function') {
      redis.defineCommand('policiaSeqNext', { numberOfKeys: 1, lua: NEXT })
      redis.defineCommand('policiaSeqSeed', { numberOfKeys: 1, lua: SEED_AND_NEXT })
    }
    this.redis = redis as Redis & SequenceCommands
  }

  async next (key: string): Promise<number | null> {
    const n = Number(await this.redis.policiaSeqNext(`${this.prefix}seq:${key}`))
    return n < 0 ? null : n
  }

  async seedAndNext (key: string, floor: number): Promise<number> {
    return Number(await this.redis.policiaSeqSeed(`${this.prefix}seq:${key}`, floor))
  }
}

/** A snapshot cached by an older version (no personalId) is treated as a miss and read afresh. */
function current (user: UserSnapshot): UserSnapshot | null {
  return 'personalId' in user ? user : null
}

/** Caches a user snapshot unless the user changed since its generation was read. */
const PUT_USER = `
if (redis.call('GET', KEYS[2]) or '0') == ARGV[2] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) end
return 0`

interface SessionCommands {
  policiaPutUser (userKey: string, genKey: string, snapshot: string, gen: string, ttlMs: number): Promise<number>
}

export class RedisSessionStore implements SessionStore {
  private readonly redis: Redis & SessionCommands

  constructor (redis: Redis, private readonly prefix: string) {
    if (typeof (redis as Partial<SessionCommands>).policiaPutUser !== 'function') {
      redis.defineCommand('policiaPutUser', { numberOfKeys: 2, lua: PUT_USER })
    }
    this.redis = redis as Redis & SessionCommands
  }

  private sessionKey (jti: string): string { return `${this.prefix}sess:${jti}` }
  private userKey (id: string): string { return `${this.prefix}user:${id}` }
  private genKey (id: string): string { return `${this.prefix}usergen:${id}` }

  async lookup (jti: string, userId: string): Promise<SessionLookup> {
    const [session, user, gen] = await this.redis.mget(this.sessionKey(jti), this.userKey(userId), this.genKey(userId))
    return {
      session: session === 'active' || session === 'revoked' ? session : null,
      user: user === null || user === undefined ? null : current(JSON.parse(user) as UserSnapshot),
      userGen: gen ?? '0',
    }
  }

  async fillSession (jti: string, state: SessionState, ttlMs: number): Promise<void> {
    await this.redis.set(this.sessionKey(jti), state, 'PX', Math.max(Math.ceil(ttlMs), 1), 'NX')
  }

  async putSession (jti: string, state: SessionState, ttlMs: number): Promise<void> {
    await this.redis.set(this.sessionKey(jti), state, 'PX', Math.max(Math.ceil(ttlMs), 1))
  }

  async putUser (user: UserSnapshot, ttlMs: number, gen: string): Promise<void> {
    await this.redis.policiaPutUser(this.userKey(user.id), this.genKey(user.id), JSON.stringify(user), gen, ttlMs)
  }

  async dropUser (userId: string): Promise<void> {
    await this.redis.multi().incr(this.genKey(userId)).pexpire(this.genKey(userId), 3_600_000).del(this.userKey(userId)).exec()
  }
}

/** One INCR per window, its expiry set on the first hit; returns count and PTTL pairs. */
const HIT = `
local out = {}
for i, key in ipairs(KEYS) do
  local c = redis.call('INCR', key)
  if c == 1 then redis.call('PEXPIRE', key, ARGV[i]) end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, ARGV[i]); ttl = tonumber(ARGV[i]) end
  out[#out + 1] = c
  out[#out + 1] = ttl
end
return out`

/** Sliding log in a sorted set, timed by Redis's own clock (instances' clocks may differ). */
const ATTEMPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - win)
local n = redis.call('ZCARD', KEYS[1])
if n >= max then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {n + 1, tonumber(oldest[2]) + win - now}
end
redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], win)
return {n + 1, win}`

interface RateCommands {
  policiaHit (...args: Array<string | number>): Promise<number[]>
  policiaAttempt (key: string, windowMs: number, max: number, nonce: string): Promise<number[]>
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis & RateCommands

  constructor (redis: Redis, private readonly prefix: string) {
    if (typeof (redis as Partial<RateCommands>).policiaHit !== 'function') {
      redis.defineCommand('policiaHit', { lua: HIT })
      redis.defineCommand('policiaAttempt', { numberOfKeys: 1, lua: ATTEMPT })
    }
    this.redis = redis as Redis & RateCommands
  }

  private key (k: string): string { return `${this.prefix}rl:${k}` }

  async hit (windows: readonly Window[]): Promise<Counter[]> {
    const flat = await this.redis.policiaHit(windows.length, ...windows.map((w) => this.key(w.key)), ...windows.map((w) => w.windowMs))
    return windows.map((_, i) => ({ count: Number(flat[2 * i]), resetMs: Math.max(0, Number(flat[2 * i + 1])) }))
  }

  async attempt (key: string, windowMs: number, max: number): Promise<Counter> {
    const [count, resetMs] = await this.redis.policiaAttempt(this.key(key), windowMs, max, randomUUID())
    return { count: Number(count), resetMs: Math.max(0, Number(resetMs)) }
  }

  async reset (key: string): Promise<void> {
    await this.redis.del(this.key(key))
  }
}
