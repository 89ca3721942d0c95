/**
 * The Redis rate-limit store (docs/user-guide.md "Rate limits") and the login lock-out's sliding
 * logs (S15), with the unlock of one username on every address (S13).
 * Every update is one Lua script (atomic); every key lives under the
 * configured namespace (`<prefix>rl:`).
 */
import type { Redis } from 'ioredis'
import type { AttemptLog, AttemptResult, Counter, RateLimitStore, Window } from './types.js'

/**
 * One INCR per window (the first ARGV[1] keys), its expiry set on the
 * first hit; returns count and PTTL pairs, then the value of every further
 * key (false: none), so that a request's counters and its session lookup
 * are one command (`hitAndRead`).
 */
const HIT = `
local n = tonumber(ARGV[1])
local out = {}
for i = 1, n do
  local key = KEYS[i]
  local c = redis.call('INCR', key)
  if c == 1 then redis.call('PEXPIRE', key, ARGV[i + 1]) end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, ARGV[i + 1]); ttl = tonumber(ARGV[i + 1]) end
  out[#out + 1] = c
  out[#out + 1] = ttl
end
for i = n + 1, #KEYS do out[#out + 1] = redis.call('GET', KEYS[i]) end
return out`

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

interface RateCommands {
  policiaHit (...args: Array<string | number>): Promise<Array<number | string | null>>
  policiaAttempt (...args: Array<string | number>): Promise<number[]>
  policiaClear (...args: Array<string | number>): Promise<number>
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis & RateCommands
  /** The client its commands go to. */
  get client (): Redis { return this.redis }

  constructor (redis: Redis, private readonly prefix: string) {
    if (typeof (redis as Partial<RateCommands>).policiaHit !== 'function') {
      redis.defineCommand('policiaHit', { lua: HIT })
      redis.defineCommand('policiaAttempt', { lua: ATTEMPT })
      redis.defineCommand('policiaClear', { lua: CLEAR })
    }
    this.redis = redis as Redis & RateCommands
  }

  private key (k: string): string { return `${this.prefix}rl:${k}` }

  async hit (windows: readonly Window[]): Promise<Counter[]> {
    return (await this.hitAndRead(windows, [])).counters
  }

  /** `hit`, and the values of `keys` (full names, outside this namespace) read in the same script. */
  async hitAndRead (windows: readonly Window[], keys: readonly string[]): Promise<{ counters: Counter[], values: Array<string | null> }> {
    const flat = await this.redis.policiaHit(windows.length + keys.length, ...windows.map((w) => this.key(w.key)), ...keys, windows.length, ...windows.map((w) => w.windowMs))
    const counters = windows.map((_, i) => ({ count: Number(flat[2 * i]), resetMs: Math.max(0, Number(flat[2 * i + 1])) }))
    // GET answers come back as ioredis gives them: strings, or null for a missing key.
    return { counters, values: flat.slice(2 * windows.length) as Array<string | null> }
  }

  async attempt (logs: readonly AttemptLog[], id: string, index?: string): Promise<AttemptResult> {
    const keys = logs.map((l) => this.key(l.key))
    if (index !== undefined) keys.push(this.key(index))
    const [allowed, wait, ...counts] = await this.redis.policiaAttempt(keys.length, ...keys, ...logs.flatMap((l) => [l.windowMs, l.max]), id, index === undefined ? '0' : '1')
    return { allowed: Number(allowed) === 1, retryMs: Math.max(0, Number(wait)), counts: counts.map(Number) }
  }

  async forget (key: string, id: string): Promise<void> {
    await this.redis.zrem(this.key(key), id)
  }

  async reset (key: string): Promise<void> {
    await this.redis.del(this.key(key))
  }

  async clear (index: string, keys: readonly string[]): Promise<number> {
    return Number(await this.redis.policiaClear(1 + keys.length, this.key(index), ...keys.map((k) => this.key(k))))
  }
}
