/**
 * The login lock-out's attempt logs in Redis, shared by every instance
 * (docs/user-guide.md "Rate limits"), with the unlock of one username on
 * every address (docs/user-guide.md "Accounts and sessions"). Every update
 * is one command, a Lua script (atomic) where it reads or writes several
 * keys; the logs share the rate limits' namespace
 * (`<prefix>rl:`), where their keys (`login:…`) cannot meet a window's.
 */
import type { Redis } from 'ioredis'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { AttemptLog, AttemptLogStore, AttemptResult, LogFill } from './contract.js'

/**
 * Sliding logs in sorted sets (member: the attempt's id, score: when), timed
 * by Redis's own clock (instances' clocks may differ). The attempt enters
 * every log, or none when one is full (ARGV: window and max per key, then
 * the id, then '1' when the last key is an index set to remember the logs
 * in); returns {1, 0} or {0, ms until every full log has room}, followed by
 * the number of attempts in each log (after this one when it was logged).
 */
const ATTEMPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = 0
local counts = {}
local indexed = ARGV[#ARGV] == '1'
local n = #KEYS
if indexed then n = n - 1 end
for i = 1, n do
  local key = KEYS[i]
  local win = tonumber(ARGV[2 * i - 1])
  local max = tonumber(ARGV[2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - win)
  local n = redis.call('ZCARD', key)
  counts[i] = n
  if n >= max then
    local entry = redis.call('ZRANGE', key, n - max, n - max, 'WITHSCORES')
    wait = math.max(wait, tonumber(entry[2]) + win - now, 1)
  end
end
if wait > 0 then
  local out = {0, wait}
  for i = 1, n do out[#out + 1] = counts[i] end
  return out
end
local id = ARGV[2 * n + 1]
local longest = 0
for i = 1, n do
  local key = KEYS[i]
  counts[i] = counts[i] + redis.call('ZADD', key, now, id)
  redis.call('PEXPIRE', key, ARGV[2 * i - 1])
  if indexed then redis.call('SADD', KEYS[n + 1], key) end
  longest = math.max(longest, tonumber(ARGV[2 * i - 1]))
end
if indexed then
  local ttl = redis.call('PTTL', KEYS[n + 1])
  if ttl < longest then redis.call('PEXPIRE', KEYS[n + 1], longest) end
end
local out = {1, 0}
for i = 1, n do out[#out + 1] = counts[i] end
return out`

/**
 * Deletes every log remembered in the index KEYS[1], the logs KEYS[2..]
 * and the index; returns how many logs existed. The index lives as long as
 * the longest log it names, so it stays small (one member per address).
 */
const CLEAR = `
local n = 0
local keys = redis.call('SMEMBERS', KEYS[1])
for i = 2, #KEYS do keys[#keys + 1] = KEYS[i] end
local seen = {}
for _, key in ipairs(keys) do
  if not seen[key] then
    seen[key] = true
    n = n + redis.call('DEL', key)
  end
end
redis.call('DEL', KEYS[1])
return n`

/**
 * How full the log KEYS[1] is (ARGV: window, max), by Redis's clock as
 * ATTEMPT counts, writing nothing: {attempts in the window, ms until it has room or 0}.
 */
const FILL = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local from = '(' .. (now - win)
local n = redis.call('ZCOUNT', KEYS[1], from, '+inf')
if n < max then return {n, 0} end
local entry = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', n - max, 1)
return {n, math.max(tonumber(entry[2]) + win - now, 1)}`

const SCRIPTS = {
  /** The number of keys, the logs' keys (and the index's), each log's window and max, the id, '1' when indexed. */
  policiaAttempt: luaScript<[numberOfKeys: number, ...keysThenArgs: Array<string | number>], number[]>(ATTEMPT),
  /** One key, the log's; its window and max. */
  policiaAttemptFill: luaScript<[numberOfKeys: number, key: string, windowMs: number, max: number], number[]>(FILL),
  /** The number of keys, the index's key, the logs' keys. */
  policiaClear: luaScript<[numberOfKeys: number, ...keys: string[]], number>(CLEAR),
}

export class RedisAttemptLogStore implements AttemptLogStore {
  private readonly scripts: ScriptCommands<typeof SCRIPTS>

  constructor (private readonly client: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(client, SCRIPTS)
  }

  private key (k: string): string { return `${this.prefix}rl:${k}` }

  async attempt (logs: readonly AttemptLog[], id: string, index?: string): Promise<AttemptResult> {
    const keys = logs.map((l) => this.key(l.key))
    if (index !== undefined) keys.push(this.key(index))
    const [allowed, wait, ...counts] = await this.scripts.policiaAttempt(keys.length, ...keys, ...logs.flatMap((l) => [l.windowMs, l.max]), id, index === undefined ? '0' : '1')
    return { allowed: Number(allowed) === 1, retryMs: Math.max(0, Number(wait)), counts: counts.map(Number) }
  }

  async fill (log: AttemptLog): Promise<LogFill> {
    const [count, wait] = await this.scripts.policiaAttemptFill(1, this.key(log.key), log.windowMs, log.max)
    return { count: Number(count), retryMs: Math.max(0, Number(wait)) }
  }

  async forget (key: string, id: string): Promise<void> {
    await this.client.zrem(this.key(key), id)
  }

  async reset (key: string): Promise<void> {
    await this.client.del(this.key(key))
  }

  async clear (index: string, keys: readonly string[]): Promise<number> {
    return Number(await this.scripts.policiaClear(1 + keys.length, this.key(index), ...keys.map((k) => this.key(k))))
  }
}
