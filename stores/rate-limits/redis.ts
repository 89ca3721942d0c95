/**
 * Rate-limit windows in Redis, shared by every instance (docs/user-guide.md
 * "Rate limits"): each hit counted in one Lua script (atomic), every key
 * under `<prefix>rl:`. The hits of one turn of the event loop share one
 * script run (core/coalesce.ts; docs/performance.md "One Redis script
 * per turn"), which treats each in call order as if it ran alone.
 */
import { ReplyError, type Redis } from 'ioredis'
import { Coalescer } from '../../core/coalesce.js'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { Counter, RateLimitStore, Window } from './contract.js'

/**
 * ARGV[1] hits, one after another. Hit h takes ARGV: its number of
 * windows n, its number of keys to read m, then each window's length; and
 * the next n + m KEYS: its windows' keys, then the keys to read. For each
 * window one INCR, its expiry set on the first hit (and again if it has
 * none: a key left without one would never reset), and the count and PTTL
 * appended; then the value of each key to read (false: none). So a
 * request's counters and its session lookup are one command (`hitAndRead`),
 * and the requests of a turn one command between them.
 *
 * Each hit runs under `pcall` and its part of the answer starts with 0, or
 * with the error's text (then 2n + m placeholders): a key of the wrong type
 * fails the one request that touched it, not its turn-mates.
 */
const HIT_MANY = `
local out = {}
local k, a = 0, 2
for h = 1, tonumber(ARGV[1]) do
  local n, m = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local k0, a0 = k, a + 2
  local part = {}
  local ok, err = pcall(function ()
    for i = 1, n do
      local key, ms = KEYS[k0 + i], ARGV[a0 + i - 1]
      local c = redis.call('INCR', key)
      if c == 1 then redis.call('PEXPIRE', key, ms) end
      local ttl = redis.call('PTTL', key)
      if ttl < 0 then redis.call('PEXPIRE', key, ms); ttl = tonumber(ms) end
      part[#part + 1] = c
      part[#part + 1] = ttl
    end
    for i = 1, m do
      part[#part + 1] = redis.call('GET', KEYS[k0 + n + i])
    end
  end)
  k, a = k0 + n + m, a0 + n
  if ok then
    out[#out + 1] = 0
    for i = 1, 2 * n + m do out[#out + 1] = part[i] end
  else
    out[#out + 1] = type(err) == 'table' and err.err or tostring(err)
    for i = 1, 2 * n + m do out[#out + 1] = false end
  end
end
return out`

/**
 * Hits counted ahead of Redis by one instance (stores/admission.ts), added
 * together: KEYS the windows, ARGV per key its count then its length. The
 * same expiry rules as HIT_MANY; answers count and PTTL per key.
 */
export const ADD_MANY = `
local out = {}
for i = 1, #KEYS do
  local n, ms = tonumber(ARGV[2 * i - 1]), ARGV[2 * i]
  local c = redis.call('INCRBY', KEYS[i], n)
  if c == n then redis.call('PEXPIRE', KEYS[i], ms) end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < 0 then redis.call('PEXPIRE', KEYS[i], ms); ttl = tonumber(ms) end
  out[#out + 1] = c
  out[#out + 1] = ttl
end
return out`

const SCRIPTS = {
  /** The number of keys, the windows' keys, then per window the hits to add and its length. */
  policiaAddMany: luaScript<[numberOfKeys: number, ...keysThenArgs: Array<string | number>], number[]>(ADD_MANY),
  /** The number of keys, every hit's keys, the number of hits, then per hit: windows, keys read, each window's length. */
  policiaHitMany: luaScript<[numberOfKeys: number, ...keysThenArgs: Array<string | number>], Array<number | string | null>>(HIT_MANY),
}

interface Hit {
  readonly windows: readonly Window[]
  readonly keys: readonly string[]
}

interface HitResult {
  readonly counters: Counter[]
  readonly values: Array<string | null>
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly scripts: ScriptCommands<typeof SCRIPTS>
  /** Each hit's answer, or the error of its own part of the script. */
  private readonly hits = new Coalescer<Hit, HitResult | Error>(async (batch) => this.hitMany(batch))

  /** `client`: the one its commands go to (stores/admission.ts reads the session cache in the same script). */
  constructor (readonly client: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(client, SCRIPTS)
  }

  private key (k: string): string { return `${this.prefix}rl:${k}` }

  async hit (windows: readonly Window[]): Promise<Counter[]> {
    return (await this.hitAndRead(windows, [])).counters
  }

  /** `hit`, and the values of `keys` (full names, outside this namespace) read in the same script. */
  async hitAndRead (windows: readonly Window[], keys: readonly string[]): Promise<HitResult> {
    const res = await this.hits.call({ windows, keys })
    if (res instanceof Error) throw res
    return res
  }

  /** Adds `n` hits to each window at once (hits already admitted); its counters, in order. */
  async add (increments: ReadonlyArray<{ readonly key: string, readonly windowMs: number, readonly n: number }>): Promise<Counter[]> {
    const flat = await this.scripts.policiaAddMany(increments.length, ...increments.map((i) => this.key(i.key)), ...increments.flatMap((i) => [i.n, i.windowMs]))
    return increments.map((_, i) => ({ count: Number(flat[2 * i]), resetMs: Math.max(0, Number(flat[2 * i + 1])) }))
  }

  /** One script run for the hits of a turn; its flat answer split per hit (its status, then 2 per window, 1 per key read). */
  private async hitMany (batch: readonly Hit[]): Promise<Array<HitResult | Error>> {
    const keys: string[] = []
    const args: number[] = [batch.length]
    for (const h of batch) {
      for (const w of h.windows) keys.push(this.key(w.key))
      keys.push(...h.keys)
      args.push(h.windows.length, h.keys.length)
      for (const w of h.windows) args.push(w.windowMs)
    }
    const flat = await this.scripts.policiaHitMany(keys.length, ...keys, ...args)
    let at = 0
    return batch.map((h) => {
      const status = flat[at++]
      if (status !== 0) {
        at += 2 * h.windows.length + h.keys.length
        // As ioredis answers a failed command: a ReplyError with Redis's text.
        return new ReplyError(String(status)) as Error
      }
      const counters = h.windows.map((_, i) => ({ count: Number(flat[at + 2 * i]), resetMs: Math.max(0, Number(flat[at + 2 * i + 1])) }))
      at += 2 * h.windows.length
      // GET answers come back as ioredis gives them: strings, or null for a missing key.
      const values = flat.slice(at, at + h.keys.length) as Array<string | null>
      at += h.keys.length
      return { counters, values }
    })
  }
}
