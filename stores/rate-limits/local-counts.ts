/**
 * One instance's view of shared rate-limit windows, so that a request far
 * from its limit is counted without waiting for Redis (docs/decisions.md
 * "Admission without a round trip"). For each window it keeps the highest
 * count Redis has answered, the hits it has sent and not yet seen answered,
 * and the hits it admitted and has not sent yet; stores/admission.ts sends
 * them (see below). A window is counted here only while:
 *
 * - its limit is at least LOCAL_MIN (a small limit is decided by Redis hit
 *   by hit, exactly);
 * - the count, with everything not yet answered, stays out of the limit's
 *   last tenth (there every hit asks Redis again, so the limit itself is
 *   decided there, counting every instance);
 * - the window has more than END_SLACK_MS to run (a new window is learnt
 *   from Redis).
 *
 * Hits admitted here are sent once a window holds PRESSING_SHARE of its
 * limit unsent (`pressing`), else at the admission's leisure
 * (stores/admission.ts): what the other instances do not know of this
 * one's hits stays a small share of any limit, however fast it is spent.
 *
 * The counts shown may be short of other instances' latest hits (a few
 * two-hundredths of the limit, or up to about 200 ms of them); they are
 * never short of this instance's own.
 */
import type { Counter, Window } from './contract.js'

/** The smallest limit counted here; below it every hit asks Redis. */
export const LOCAL_MIN = 100
/** A window this close to its end is left to Redis. */
const END_SLACK_MS = 100
/** Windows remembered at most; the oldest idle ones go first. */
const MAX_WINDOWS = 10_000

/** Hits kept for Redis to decide: the last tenth of a limit. */
const margin = (max: number): number => Math.ceil(max / 10)

/** Unsent hits that make a window pressing: a two-hundredth of its limit (5 of the default 1,000). */
export const PRESSING_SHARE = 1 / 200
const pressingAt = (max: number): number => Math.max(1, Math.floor(max * PRESSING_SHARE))

interface Known {
  /** The highest count Redis answered in this window. */
  count: number
  /** When the window ends (ms since the epoch), as Redis last said. */
  resetAt: number
  /** Hits sent to Redis whose answer has not come yet. */
  sent: number
  /** Hits admitted here and not sent yet. */
  unsent: number
  readonly windowMs: number
}

/** Hits to add to one window in Redis. */
export interface Increment {
  readonly key: string
  readonly windowMs: number
  readonly n: number
}

export class LocalCounts {
  private readonly known = new Map<string, Known>()
  /** A window holds PRESSING_SHARE of its limit unsent: its hits should go to Redis now (cleared by `take`). */
  pressing = false

  /** One more hit on each window, counted here; undefined when any of them must ask Redis (then none is counted). */
  tryHit (windows: readonly Window[], now: number): Counter[] | undefined {
    for (const w of windows) {
      const k = this.known.get(w.key)
      if (k === undefined || w.max === undefined || w.max < LOCAL_MIN || now >= k.resetAt - END_SLACK_MS) return undefined
      if (k.count + k.sent + k.unsent + 1 > w.max - margin(w.max)) return undefined
    }
    return windows.map((w) => {
      const k = this.known.get(w.key)!
      k.unsent++
      if (k.unsent >= pressingAt(w.max!)) this.pressing = true
      return { count: k.count + k.sent + k.unsent, resetMs: k.resetAt - now }
    })
  }

  /** What Redis answered for hits it counted (one request's, or a batch sent by `take`). */
  learn (windows: readonly Window[], counters: readonly Counter[], now: number): void {
    windows.forEach((w, i) => {
      const c = counters[i]!
      const resetAt = now + c.resetMs
      const k = this.known.get(w.key)
      if (k === undefined) {
        if (w.max === undefined || w.max < LOCAL_MIN) return
        if (this.known.size >= MAX_WINDOWS) this.evict(now)
        this.known.set(w.key, { count: c.count, resetAt, sent: 0, unsent: 0, windowMs: w.windowMs })
      } else if (resetAt > k.resetAt + k.windowMs / 2) {
        // A new window: its count starts over.
        k.count = c.count
        k.resetAt = resetAt
      } else {
        k.count = Math.max(k.count, c.count)
      }
    })
  }

  /** The hits admitted here since the last call, to be added in Redis; they count as sent until `settle` or `forget`. */
  take (): Increment[] {
    this.pressing = false
    const out: Increment[] = []
    for (const [key, k] of this.known) {
      if (k.unsent === 0) continue
      out.push({ key, windowMs: k.windowMs, n: k.unsent })
      k.sent += k.unsent
      k.unsent = 0
    }
    return out
  }

  /** Redis added `increments` (from `take`) and answered `counters`. */
  settle (increments: readonly Increment[], counters: readonly Counter[], now: number): void {
    increments.forEach((inc, i) => {
      const k = this.known.get(inc.key)
      if (k === undefined) return
      k.sent = Math.max(0, k.sent - inc.n)
      this.learn([inc], [counters[i]!], now)
    })
  }

  /** Redis could not take `increments`: those windows are asked of Redis again, hit by hit. */
  forget (increments: readonly Increment[]): void {
    for (const inc of increments) this.known.delete(inc.key)
  }

  /** Forgets every window (Redis went away or came back: its counts may have changed). */
  clear (): void {
    this.known.clear()
  }

  private evict (now: number): void {
    for (const [key, k] of this.known) {
      if (k.resetAt <= now || (k.sent === 0 && k.unsent === 0)) this.known.delete(key)
      if (this.known.size < MAX_WINDOWS * 0.9) return
    }
  }
}
