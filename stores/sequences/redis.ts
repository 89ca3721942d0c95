/** Id counters in Redis, shared by every instance: `<prefix>seq:<key>`, each draw one Lua script (atomic). */
import type { Redis } from 'ioredis'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { SequenceStore } from './contract.js'

const NEXT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])`

const SEED_AND_NEXT = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if cur < floor then redis.call('SET', KEYS[1], floor) end
return redis.call('INCRBY', KEYS[1], ARGV[2])`

const SCRIPTS = {
  policiaSeqNext: luaScript<[key: string, count: number], number>(NEXT, 1),
  policiaSeqSeed: luaScript<[key: string, floor: number, count: number], number>(SEED_AND_NEXT, 1),
}

/**
 * The counters live in Redis, which may come back older (restored from a
 * snapshot or an append-only file that lost its tail, a replica promoted
 * with lag; docs/operator-guide.md "Ids and a Redis restore"): a counter behind would hand out numbers already
 * issued. So, as the session cache does (stores/sessions/redis.ts), an instance trusts a
 * counter only once it has seeded it from the database (`seedAndNext`)
 * over the connection it is using: after each (re)connection the first
 * draw of every key re-seeds. And it remembers the highest number it drew
 * of each key: Redis answering at or below it went back in time (a reload
 * that kept the connections), so that draw is dropped and the key
 * re-seeded, above that number too.
 */
export class RedisSequenceStore implements SequenceStore {
  private readonly scripts: ScriptCommands<typeof SCRIPTS>
  /** Counts (re)connections; `seeded` holds the one each key was last seeded over. */
  private connection = 1
  private readonly seeded = new Map<string, number>()
  /** The highest number this instance drew of each key. */
  private readonly drawn = new Map<string, number>()

  constructor (redis: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(redis, SCRIPTS)
    redis.on('ready', () => { this.connection++ })
  }

  /** `n` is the last number of a block of `count`; the first is returned. */
  async next (key: string, count = 1): Promise<number | null> {
    const stamp = this.connection
    if (this.seeded.get(key) !== stamp) return null
    const n = Number(await this.scripts.policiaSeqNext(`${this.prefix}seq:${key}`, count))
    if (n < 0 || stamp !== this.connection || n - count + 1 <= (this.drawn.get(key) ?? 0)) return null
    this.drawn.set(key, n)
    return n - count + 1
  }

  async seedAndNext (key: string, floor: number, count = 1): Promise<number> {
    const stamp = this.connection
    const n = Number(await this.scripts.policiaSeqSeed(`${this.prefix}seq:${key}`, Math.max(floor, this.drawn.get(key) ?? 0), count))
    if (stamp === this.connection) this.seeded.set(key, stamp)
    if (n > (this.drawn.get(key) ?? 0)) this.drawn.set(key, n)
    return n - count + 1
  }
}
