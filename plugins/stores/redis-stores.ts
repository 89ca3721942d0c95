/**
 * Redis stores shared by every instance. Counter updates are single Lua
 * scripts (atomic); every key lives under the configured namespace.
 */
import type { Redis } from 'ioredis'
import type { SequenceStore, SessionLookup, SessionState, SessionStore, UserSnapshot } from './types.js'

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

export class RedisSessionStore implements SessionStore {
  constructor (private readonly redis: Redis, private readonly prefix: string) {}

  private sessionKey (jti: string): string { return `${this.prefix}sess:${jti}` }
  private userKey (id: string): string { return `${this.prefix}user:${id}` }

  async lookup (jti: string, userId: string): Promise<SessionLookup> {
    const [session, user] = await this.redis.mget(this.sessionKey(jti), this.userKey(userId))
    return {
      session: session === 'active' || session === 'revoked' ? session : null,
      user: user === null || user === undefined ? null : JSON.parse(user) as UserSnapshot,
    }
  }

  async putSession (jti: string, state: SessionState, ttlMs: number): Promise<void> {
    await this.redis.set(this.sessionKey(jti), state, 'PX', Math.max(Math.ceil(ttlMs), 1))
  }

  async putUser (user: UserSnapshot, ttlMs: number): Promise<void> {
    await this.redis.set(this.userKey(user.id), JSON.stringify(user), 'PX', ttlMs)
  }

  async dropUser (userId: string): Promise<void> {
    await this.redis.del(this.userKey(userId))
  }
}
