/**
 * Rate-limit windows in Redis, shared by every instance (docs/user-guide.md
 * "Rate limits"): each hit one Lua script (atomic), every key under
 * `<prefix>rl:`.
 */
import type { Redis } from 'ioredis'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { Counter, RateLimitStore, Window } from './contract.js'

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

const SCRIPTS = {
  /** The number of keys, the windows' keys then the keys to read, the number of windows, each window's length. */
  policiaHit: luaScript<[numberOfKeys: number, ...keysThenArgs: Array<string | number>], Array<number | string | null>>(HIT),
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly scripts: ScriptCommands<typeof SCRIPTS>

  /** `client`: the one its commands go to (stores/admission.ts reads the session cache in the same script). */
  constructor (readonly client: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(client, SCRIPTS)
  }

  private key (k: string): string { return `${this.prefix}rl:${k}` }

  async hit (windows: readonly Window[]): Promise<Counter[]> {
    return (await this.hitAndRead(windows, [])).counters
  }

  /** `hit`, and the values of `keys` (full names, outside this namespace) read in the same script. */
  async hitAndRead (windows: readonly Window[], keys: readonly string[]): Promise<{ counters: Counter[], values: Array<string | null> }> {
    const flat = await this.scripts.policiaHit(windows.length + keys.length, ...windows.map((w) => this.key(w.key)), ...keys, windows.length, ...windows.map((w) => w.windowMs))
    const counters = windows.map((_, i) => ({ count: Number(flat[2 * i]), resetMs: Math.max(0, Number(flat[2 * i + 1])) }))
    // GET answers come back as ioredis gives them: strings, or null for a missing key.
    return { counters, values: flat.slice(2 * windows.length) as Array<string | null> }
  }
}
