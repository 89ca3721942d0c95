/**
 * Stream slots in Redis, shared by every instance: one sorted set per user,
 * `<prefix>flujos:<owner>`, each member a slot scored by the end of its
 * lease (Redis's clock, so instances' clocks need not agree). Taking a slot
 * is one Lua script: drop the expired leases, count, add.
 */
import type { Redis } from 'ioredis'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { StreamSlotStore } from './contract.js'

/** KEYS[1] the owner's set; ARGV: slot, max, lease (ms). 1 when taken or renewed, 0 when full. */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lease = tonumber(ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1`

const SCRIPTS = {
  policiaStreamSlot: luaScript<[key: string, slot: string, max: number, leaseMs: number], number>(ACQUIRE, 1),
}

export class RedisStreamSlotStore implements StreamSlotStore {
  private readonly scripts: ScriptCommands<typeof SCRIPTS>

  constructor (private readonly redis: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(redis, SCRIPTS)
  }

  private key (owner: string): string { return `${this.prefix}flujos:${owner}` }

  async acquire (owner: string, slot: string, max: number, leaseMs: number): Promise<boolean> {
    return await this.scripts.policiaStreamSlot(this.key(owner), slot, max, leaseMs) === 1
  }

  async release (owner: string, slot: string): Promise<void> {
    await this.redis.zrem(this.key(owner), slot)
  }
}
