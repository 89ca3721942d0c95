/**
 * Id counters an instance holds while it is the only one drawing them
 * (docs/decisions.md "Ids without a round trip"). Redis grants a counter's
 * lease with a draw when no other instance drew that counter in the last
 * SHARED_MS; the holder then draws in memory, in call order, and every
 * RENEW_EVERY_MS one script writes its counters back to Redis and renews
 * its leases. An instance that meets another's lease marks the counter
 * shared and waits; the holder's next renewal writes the counter back and
 * gives the lease up instead of renewing it, and from then on both draw
 * from Redis as before, each draw one script, until SHARED_MS pass with one
 * drawer only.
 *
 * The holder draws nothing while a renewal is on its way (a renewal that
 * gives the lease up must have written back every number drawn), nor past
 * its lease's end as counted from when the renewal was sent, less
 * SAFETY_MS; a lease left idle IDLE_MS is given up. A holder that dies
 * keeps the counter until its lease ends (LEASE_MS), and may have drawn up
 * to one renewal's worth of numbers Redis never heard of: the database's
 * unique id is the safety net there, as after a Redis restore
 * (records/storage/create-path.ts `freshIds`).
 */

/** A lease's length in Redis; the longest a dead holder keeps a counter. */
export const LEASE_MS = 1000
/** The holder stops drawing this long before its lease ends. */
const SAFETY_MS = 250
/** How often a holder writes its counters back and renews. */
const RENEW_EVERY_MS = 50
/** A lease not drawn from for this long is given up (until then it is renewed, so a second drawer still waits one renewal at most). */
export const IDLE_MS = 1000
/** A counter two instances drew within this long is drawn from Redis only. */
export const SHARED_MS = 5000

interface Lease {
  /** The holder draws here until then (ms since the epoch). */
  validUntil: number
  lastUsed: number
}

/** Writes back `counters` and renews (or, with `release`, gives up) each key's lease; 1 where the lease is still held. */
export type Renew = (keys: readonly string[], counters: readonly number[], release: readonly boolean[]) => Promise<readonly number[]>

export class SequenceLeases {
  private readonly held = new Map<string, Lease>()
  private renewing: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined

  /** `drawn`: the highest number this instance drew of each key (the store's own map). */
  constructor (private readonly renew: Renew, private readonly drawn: Map<string, number>) {}

  /**
   * The first of `count` numbers drawn here; 'wait' while a renewal is on
   * its way (call again after `settled()`); undefined when this instance
   * does not hold the key (draw from Redis).
   */
  draw (key: string, count: number, now: number): number | 'wait' | undefined {
    const lease = this.held.get(key)
    if (lease === undefined) return undefined
    if (this.renewing !== undefined) return 'wait'
    if (now >= lease.validUntil) {
      this.held.delete(key)
      return undefined
    }
    const first = (this.drawn.get(key) ?? 0) + 1
    this.drawn.set(key, first + count - 1)
    lease.lastUsed = now
    return first
  }

  async settled (): Promise<void> {
    await this.renewing
  }

  /** Redis granted (or renewed with a draw) `key`'s lease, by a script sent at `sentAt`. */
  granted (key: string, sentAt: number): void {
    const lease = this.held.get(key)
    if (lease !== undefined) lease.validUntil = Math.max(lease.validUntil, sentAt + LEASE_MS - SAFETY_MS)
    else this.held.set(key, { validUntil: sentAt + LEASE_MS - SAFETY_MS, lastUsed: sentAt })
    this.timer ??= setInterval(() => { this.tick() }, RENEW_EVERY_MS).unref()
  }

  /** Redis drew for this instance without a lease: it holds none of `key`. */
  dropped (key: string): void {
    this.held.delete(key)
  }

  /** The connection changed or closed: whatever Redis held may be gone; hold nothing. */
  dropAll (): void {
    this.held.clear()
  }

  /** Writes back and gives up every lease (at close, so no other instance waits for them to end). */
  async close (): Promise<void> {
    await this.renewing
    if (this.held.size > 0) await this.send(true).catch(() => undefined)
    this.held.clear()
    this.stopTimer()
  }

  private tick (): void {
    if (this.renewing !== undefined) return
    if (this.held.size === 0) {
      this.stopTimer()
      return
    }
    this.renewing = this.send(false).catch(() => { this.held.clear() }).finally(() => { this.renewing = undefined })
  }

  private async send (releaseAll: boolean): Promise<void> {
    const sentAt = Date.now()
    const keys = [...this.held.keys()]
    const release = keys.map((k) => releaseAll || sentAt - this.held.get(k)!.lastUsed >= IDLE_MS)
    const kept = await this.renew(keys, keys.map((k) => this.drawn.get(k) ?? 0), release)
    keys.forEach((k, i) => {
      const lease = this.held.get(k)
      if (lease === undefined) return
      if (kept[i] === 1) lease.validUntil = sentAt + LEASE_MS - SAFETY_MS
      else this.held.delete(k)
    })
  }

  private stopTimer (): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }
}
