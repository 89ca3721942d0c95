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
      user: user === null || user === undefined ? null : JSON.parse(user) as UserSnapshot,
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
