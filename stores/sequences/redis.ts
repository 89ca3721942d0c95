/**
 * Id counters in Redis, shared by every instance: `<prefix>seq:<key>`, each
 * draw one Lua script (atomic). The draws of one turn of the event loop
 * share one script run (core/coalesce.ts; docs/performance.md "One Redis
 * script per turn"): one INCRBY per key of the sum of its draws, the block
 * handed out in call order, so each caller gets the numbers it would have
 * got from a script of its own sent in that order. (`seedAndNext` is not
 * batched: sent at once, it may take a number below a batched draw's.)
 * A counter only one instance draws is leased to it and drawn in memory
 * (leases.ts): `<key>:lease` names the holder, `<key>:shared` the last
 * instance that found the counter drawn by another.
 */
import { randomUUID } from 'node:crypto'
import { ReplyError, type Redis } from 'ioredis'
import { Coalescer } from '../../core/coalesce.js'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import type { SequenceStore } from './contract.js'
import { LEASE_MS, SequenceLeases, SHARED_MS } from './leases.js'

/**
 * KEYS: (counter, lease, shared) per key. ARGV: how many numbers to draw of
 * each key, then the highest number this instance drew of each, then the
 * instance, whether it takes a lease, LEASE_MS, SHARED_MS. For each key:
 * {-2, 0} when another instance holds it (marked shared: the holder gives it
 * up at its next renewal); {-1, 0} when the counter is not there (seed it);
 * else {last, 1 when this instance holds the lease after the draw}. Each
 * key under `pcall`, its error's text in its place (a value that is no
 * number fails the draws of that key only).
 */
export const NEXT_MANY = `
local n = #KEYS / 3
local me, want, leaseMs, sharedMs = ARGV[2 * n + 1], ARGV[2 * n + 2], ARGV[2 * n + 3], ARGV[2 * n + 4]
local out = {}
for i = 1, n do
  local seq, lease, shared = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local ok, r = pcall(function ()
    local holder = redis.call('GET', lease)
    if holder and holder ~= me then
      redis.call('SET', shared, me, 'PX', sharedMs)
      return {-2, 0}
    end
    if redis.call('EXISTS', seq) == 0 then return {-1, 0} end
    if holder and tonumber(redis.call('GET', seq)) < tonumber(ARGV[n + i]) then redis.call('SET', seq, ARGV[n + i]) end
    local last = redis.call('INCRBY', seq, ARGV[i])
    local other = redis.call('GET', shared)
    if other then
      if other ~= me then redis.call('SET', shared, me, 'PX', sharedMs) end
      if holder then redis.call('DEL', lease) end
      return {last, 0}
    end
    if holder or want == '1' then
      redis.call('SET', lease, me, 'PX', leaseMs)
      return {last, 1}
    end
    return {last, 0}
  end)
  if ok then out[i] = r else out[i] = type(r) == 'table' and r.err or tostring(r) end
end
return out`

/** KEYS: counter, lease, shared. ARGV: floor, count, instance, SHARED_MS. -2 when another instance holds the lease. */
const SEED_AND_NEXT = `
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[3] then
  redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])
  return -2
end
if holder then redis.call('DEL', KEYS[2]) end
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if cur < floor then redis.call('SET', KEYS[1], floor) end
return redis.call('INCRBY', KEYS[1], ARGV[2])`

/**
 * A holder's renewal. KEYS: (counter, lease, shared) per key. ARGV: the
 * highest number drawn of each key, whether to give each up, the instance,
 * LEASE_MS. Raises each counter that is there to what was drawn; then 1
 * where the lease is this instance's and renewed, 0 where it is not (any
 * longer), was asked for (shared) or given up.
 */
export const RENEW = `
local n = #KEYS / 3
local me, leaseMs = ARGV[2 * n + 1], ARGV[2 * n + 2]
local out = {}
for i = 1, n do
  local seq, lease, shared = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local ok, r = pcall(function ()
    local cur = redis.call('GET', seq)
    if cur and tonumber(cur) < tonumber(ARGV[i]) then redis.call('SET', seq, ARGV[i]) end
    if redis.call('GET', lease) ~= me then return 0 end
    if ARGV[n + i] == '1' or redis.call('EXISTS', shared) == 1 then
      redis.call('DEL', lease)
      return 0
    end
    redis.call('PEXPIRE', lease, leaseMs)
    return 1
  end)
  out[i] = ok and r or 0
end
return out`

const SCRIPTS = {
  /** The number of keys, the keys, then how many numbers to draw of each. */
  policiaSeqNextMany: luaScript<[numberOfKeys: number, ...keysThenArgs: Array<string | number>], Array<[number, number] | string>>(NEXT_MANY),
  policiaSeqSeed: luaScript<[key: string, lease: string, shared: string, floor: number, count: number, me: string, sharedMs: number], number>(SEED_AND_NEXT, 3),
  policiaSeqRenew: luaScript<[numberOfKeys: number, ...keysThenArgs: Array<string | number>], number[]>(RENEW),
}

/** Waits between asks for a counter another instance holds; past the last, a 503. */
const HELD_WAITS_MS = [2, 4, 8, 16, 32, 64, ...Array<number>(Math.ceil(2 * LEASE_MS / 100)).fill(100)]
const pause = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
/** Read by http/errors.ts as Redis not answering: a 503. */
const heldTooLong = (key: string): Error => new Error(`Command timed out: the id counter ${key} stays leased to another instance`)

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
  /** A draw's answer: the first number of its block, null (the key is not in Redis, or went back), 'held' (by another instance), or its key's error. */
  private readonly draws = new Coalescer<Draw, number | null | 'held' | Error>(async (batch) => this.nextMany(batch))
  /** Draws of each key asked of Redis and not answered yet: none is drawn in memory meanwhile. */
  private readonly asking = new Map<string, number>()
  /** This instance in the lease keys. */
  private readonly me = randomUUID()
  private readonly leases: SequenceLeases

  constructor (redis: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(redis, SCRIPTS)
    this.leases = new SequenceLeases(async (keys, counters, release) => this.renew(keys, counters, release), this.drawn)
    redis.on('ready', () => { this.connection++; this.leases.dropAll() })
    redis.on('close', () => { this.leases.dropAll() })
  }

  /** `n` is the last number of a block of `count`; the first is returned. */
  async next (key: string, count = 1): Promise<number | null> {
    const stamp = this.connection
    // Asks answered 'held' (another instance holds the counter): each waits the next step of HELD_WAITS_MS.
    let held = 0
    for (;;) {
      if (this.seeded.get(key) !== stamp) return null
      if ((this.asking.get(key) ?? 0) === 0) {
        const local = this.leases.draw(key, count, Date.now())
        if (local === 'wait') {
          await this.leases.settled()
          continue
        }
        if (local !== undefined) return local
      }
      this.asking.set(key, (this.asking.get(key) ?? 0) + 1)
      const first = await this.draws.call({ key, count }).finally(() => { this.asking.set(key, this.asking.get(key)! - 1) })
      if (first instanceof Error) throw first
      if (first !== 'held') return first === null || stamp !== this.connection ? null : first
      if (held >= HELD_WAITS_MS.length) throw heldTooLong(key)
      await pause(HELD_WAITS_MS[held++]!)
    }
  }

  /**
   * One script run for the draws of a turn: each key's block [last - total + 1, last], split in call order.
   * Each draw is checked against `drawn` (and raises it) here, as its answer arrives: in the
   * order Redis answered, like seedAndNext's. Checked in each caller's continuation instead,
   * a seedAndNext answered after this script would be seen first (the batch's callers are
   * resumed a promise later) and its number would make this batch's look gone back: dropped
   * for nothing, a gap without a failed create (docs/user-guide.md "Records").
   */
  private async nextMany (batch: readonly Draw[]): Promise<Array<number | null | 'held' | Error>> {
    const totals = new Map<string, number>()
    for (const d of batch) totals.set(d.key, (totals.get(d.key) ?? 0) + d.count)
    const keys = [...totals.keys()]
    const sentAt = Date.now()
    const answers = await this.scripts.policiaSeqNextMany(keys.length * 3, ...keys.flatMap((k) => this.keysOf(k)),
      ...keys.map((k) => totals.get(k)!), ...keys.map((k) => this.drawn.get(k) ?? 0), this.me, 1, LEASE_MS, SHARED_MS)
    /** The next number to hand out of each key; null: Redis does not have the key (null for every draw of it); 'held': another instance holds it; an error: its own. */
    const free = new Map<string, number | null | 'held' | Error>(keys.map((k, i) => {
      const answer = answers[i]!
      // As ioredis answers a failed command: a ReplyError with Redis's text.
      if (typeof answer === 'string') return [k, new ReplyError(answer) as Error]
      const [n, leased] = answer.map(Number) as [number, number]
      if (n === -2) return [k, 'held']
      if (n === -1) return [k, null]
      if (leased === 1) this.leases.granted(k, sentAt)
      else this.leases.dropped(k)
      return [k, n - totals.get(k)! + 1]
    }))
    return batch.map((d) => {
      const first = free.get(d.key)!
      if (typeof first !== 'number') return first
      free.set(d.key, first + d.count)
      // Redis answered at or below a number this instance drew: it went back in time.
      if (first <= (this.drawn.get(d.key) ?? 0)) return null
      this.drawn.set(d.key, first + d.count - 1)
      return first
    })
  }

  async seedAndNext (key: string, floor: number, count = 1): Promise<number> {
    const stamp = this.connection
    this.leases.dropped(key)
    for (let attempt = 0; ; attempt++) {
      const [seq, lease, shared] = this.keysOf(key)
      const n = Number(await this.scripts.policiaSeqSeed(seq, lease, shared, Math.max(floor, this.drawn.get(key) ?? 0), count, this.me, SHARED_MS))
      if (n === -2) {
        if (attempt >= HELD_WAITS_MS.length) throw heldTooLong(key)
        await pause(HELD_WAITS_MS[attempt]!)
        continue
      }
      if (stamp === this.connection) this.seeded.set(key, stamp)
      if (n > (this.drawn.get(key) ?? 0)) this.drawn.set(key, n)
      return n - count + 1
    }
  }

  /** Writes back what was drawn in memory and gives up every lease (at close). */
  async close (): Promise<void> {
    await this.leases.close()
  }

  private async renew (keys: readonly string[], counters: readonly number[], release: readonly boolean[]): Promise<readonly number[]> {
    const kept = await this.scripts.policiaSeqRenew(keys.length * 3, ...keys.flatMap((k) => this.keysOf(k)),
      ...counters, ...release.map((r) => r ? 1 : 0), this.me, LEASE_MS)
    return kept.map(Number)
  }

  private keysOf (key: string): [counter: string, lease: string, shared: string] {
    const counter = `${this.prefix}seq:${key}`
    return [counter, `${counter}:lease`, `${counter}:shared`]
  }
}
