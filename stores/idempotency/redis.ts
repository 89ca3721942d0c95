/**
 * Idempotency keys in Redis, shared by every instance: one string per key,
 * `<prefix>idem:<caller>:<key>`, holding `L<token>` while its first request
 * runs (expiring with the lease) or `A<answer>` once answered (expiring
 * with IDEMPOTENCY_TTL). Each step is one Lua script, so two instances
 * never both claim a key, and a hold is only renewed, answered or let go
 * by its own token.
 */
import type { Redis } from 'ioredis'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { Claim, IdempotencyStore } from './contract.js'

/** KEYS[1]; ARGV: token, lease (ms). {0} claimed, {1} running, {2, answer} answered. */
const CLAIM = `
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'L' .. ARGV[1], 'PX', ARGV[2])
  return {0}
end
if string.sub(v, 1, 1) == 'L' then return {1} end
return {2, string.sub(v, 2)}`

/** KEYS[1]; ARGV: token, lease (ms). 1 renewed, 0 not held by this token. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= 'L' .. ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`

/** KEYS[1]; ARGV: token, answer, ttl (ms). 1 kept, 0 held or answered by another. */
const ANSWER = `
local v = redis.call('GET', KEYS[1])
if v and v ~= 'L' .. ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 'A' .. ARGV[2], 'PX', ARGV[3])
return 1`

/** KEYS[1]; ARGV: token. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == 'L' .. ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`

const SCRIPTS = {
  policiaIdemClaim: luaScript<[key: string, token: string, leaseMs: number], [0 | 1] | [2, string]>(CLAIM, 1),
  policiaIdemRenew: luaScript<[key: string, token: string, leaseMs: number], number>(RENEW, 1),
  policiaIdemAnswer: luaScript<[key: string, token: string, answer: string, ttlMs: number], number>(ANSWER, 1),
  policiaIdemRelease: luaScript<[key: string, token: string], number>(RELEASE, 1),
}

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly scripts: ScriptCommands<typeof SCRIPTS>

  constructor (redis: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(redis, SCRIPTS)
  }

  private redisKey (key: string): string { return `${this.prefix}idem:${key}` }

  async claim (key: string, token: string, leaseMs: number): Promise<Claim> {
    const [state, answer] = await this.scripts.policiaIdemClaim(this.redisKey(key), token, leaseMs)
    if (state === 0) return { state: 'claimed' }
    return state === 1 ? { state: 'running' } : { state: 'answered', answer: answer! }
  }

  async renew (key: string, token: string, leaseMs: number): Promise<boolean> {
    return await this.scripts.policiaIdemRenew(this.redisKey(key), token, leaseMs) === 1
  }

  async answer (key: string, token: string, answer: string, ttlMs: number): Promise<boolean> {
    return await this.scripts.policiaIdemAnswer(this.redisKey(key), token, answer, ttlMs) === 1
  }

  async release (key: string, token: string): Promise<void> {
    await this.scripts.policiaIdemRelease(this.redisKey(key), token)
  }
}
