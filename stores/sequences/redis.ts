/**
 * Id counters in Redis, shared by every instance: `<prefix>seq:<key>`, each
 * draw one Lua script (atomic). The draws of one turn of the event loop
 * share one script run (core/coalesce.ts; docs/performance.md "One Redis
 * script per turn"): one INCRBY per key of the sum of its draws, the block
 * handed out in call order, so each caller gets the numbers it would have
 * got from a script of its own sent in that order. (`seedAndNext` is not
 * batched: sent at once, it may take a number below a batched draw's.)
 */
import { ReplyError, type Redis } from 'ioredis'
import { Coalescer } from '../../core/coalesce.js'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { SequenceStore } from './contract.js'

/**
 * For each key, -1 when it is not there (unknown: seed it), else INCRBY by
 * its ARGV; each key under `pcall`, its error's text in its place (a value
 * that is no number fails the draws of that key only).
 */
const NEXT_MANY = `
local out = {}
for i = 1, #KEYS do
  local ok, r = pcall(function ()
    if redis.call('EXISTS', KEYS[i]) == 0 then return -1 end
    return redis.call('INCRBY', KEYS[i], ARGV[i])
  end)
  if ok then out[i] = r else out[i] = type(r) == 'table' and r.err or tostring(r) end
end
return out`

const SEED_AND_NEXT = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if cur < floor then redis.call('SET', KEYS[1], floor) end
return redis.call('INCRBY', KEYS[1], ARGV[2])`

const SCRIPTS = {
  /** The number of keys, the keys, then how many numbers to draw of each. */
  policiaSeqNextMany: luaScript<[numberOfKeys: number, ...keysThenCounts: Array<string | number>], Array<number | string>>(NEXT_MANY),
  policiaSeqSeed: luaScript<[key: string, floor: number, count: number], number>(SEED_AND_NEXT, 1),
}

interface Draw {
  readonly key: string
  readonly count: number
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
  /** A draw's answer: the first number of its block, or null (the key is not in Redis, or went back), or its key's error. */
  private readonly draws = new Coalescer<Draw, number | null | Error>(async (batch) => this.nextMany(batch))

  constructor (redis: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(redis, SCRIPTS)
    redis.on('ready', () => { this.connection++ })
  }

  /** `n` is the last number of a block of `count`; the first is returned. */
  async next (key: string, count = 1): Promise<number | null> {
    const stamp = this.connection
    if (this.seeded.get(key) !== stamp) return null
    const first = await this.draws.call({ key, count })
    if (first instanceof Error) throw first
    return first === null || stamp !== this.connection ? null : first
  }

  /**
   * One script run for the draws of a turn: each key's block [last - total + 1, last], split in call order.
   * Each draw is checked against `drawn` (and raises it) here, as its answer arrives: in the
   * order Redis answered, like seedAndNext's. Checked in each caller's continuation instead,
   * a seedAndNext answered after this script would be seen first (the batch's callers are
   * resumed a promise later) and its number would make this batch's look gone back: dropped
   * for nothing, a gap without a failed create (docs/user-guide.md "Records").
   */
  private async nextMany (batch: readonly Draw[]): Promise<Array<number | null | Error>> {
    const totals = new Map<string, number>()
    for (const d of batch) totals.set(d.key, (totals.get(d.key) ?? 0) + d.count)
    const keys = [...totals.keys()]
    const last = await this.scripts.policiaSeqNextMany(keys.length, ...keys.map((k) => `${this.prefix}seq:${k}`), ...keys.map((k) => totals.get(k)!))
    /** The next number to hand out of each key; null: Redis does not have the key (null for every draw of it); an error: its own. */
    const free = new Map<string, number | null | Error>(keys.map((k, i) => {
      const answer = last[i]
      // As ioredis answers a failed command: a ReplyError with Redis's text.
      if (typeof answer === 'string') return [k, new ReplyError(answer) as Error]
      const n = Number(answer)
      return [k, n === -1 ? null : n - totals.get(k)! + 1]
    }))
    return batch.map((d) => {
      const first = free.get(d.key)!
      if (first === null || first instanceof Error) return first
      free.set(d.key, first + d.count)
      // Redis answered at or below a number this instance drew: it went back in time.
      if (first <= (this.drawn.get(d.key) ?? 0)) return null
      this.drawn.set(d.key, first + d.count - 1)
      return first
    })
  }

  async seedAndNext (key: string, floor: number, count = 1): Promise<number> {
    const stamp = this.connection
    const n = Number(await this.scripts.policiaSeqSeed(`${this.prefix}seq:${key}`, Math.max(floor, this.drawn.get(key) ?? 0), count))
    if (stamp === this.connection) this.seeded.set(key, stamp)
    if (n > (this.drawn.get(key) ?? 0)) this.drawn.set(key, n)
    return n - count + 1
  }
}
