/**
 * The feed as one instance follows it (docs/architecture.md "Events"):
 * writes anywhere become events promptly, and every local listener (live
 * streams, webhook deliverers) hears of them in feed order.
 *
 * - A write that commits on any instance calls `written()`: at most one
 *   `escrito` signal per WRITE_SIGNAL_MS leaves the instance
 *   (stores/signals), so a burst costs one message, and an instance with
 *   no listeners costs nothing more. Only instances with listeners or
 *   wakers subscribe to `escrito`; when a signal reached none, the writer
 *   signals at most once per QUIET_SIGNAL_MS until an instance announces
 *   (`escuchando`) that it started listening, so a force whose events
 *   nobody follows pays no message per write (docs/performance.md "A lone
 *   request").
 * - Every instance seals its own writes within CHAIN_SEAL_DELAY (a
 *   second) of the first, listened to or not: one sealing transaction per
 *   burst, and the chain is never a checkpoint interval behind. A run that
 *   a transaction still running kept from some rows, or that failed, is
 *   followed by another, less and less often (up to HELD_BACK_MAX_MS),
 *   until one takes every row.
 * - An instance with listeners that hears `escrito` seals the chain now
 *   (`seal`, records/integrity/checkpoints.ts `sealNow`: the events are the
 *   chain's entries, records/events/feed.ts), and when that appended
 *   entries it signals `avanzado`. So does the periodic checkpoint run.
 *   An instance with wakers only (webhook deliverers, no live stream)
 *   seals at most every WAKER_SEAL_MS: a burst then costs one sealing
 *   transaction and one delivery round per window, not per 20 ms, for a
 *   latency no webhook receiver notices (docs/performance.md "Webhook
 *   delivery").
 * - On `avanzado`, and every POLL_MS as a back-stop for a lost signal, an
 *   instance with listeners reads the entries after the last it handed
 *   out and hands them to every listener, in batches that each start
 *   right after the previous one's last position. A waker (`onAdvance`,
 *   a webhook deliverer reading from its own position) is only woken: no
 *   entry is read for it.
 *
 * Nothing here knows HTTP or the database driver: `deps` does the reading
 * and sealing. Not a singleton: the app holds one (`app.feed`).
 */
import { CoalescedTask } from '../../core/coalesced-task.js'
import type { SignalStore } from '../../stores/signals/contract.js'
import type { FeedEntry } from './feed.js'

/** Hears each batch of new entries; a listener must not wait on the hub (errors are reported, not thrown). */
export type FeedListener = (entries: readonly FeedEntry[]) => void

export interface FeedHubDeps {
  readonly signals: SignalStore
  /** Entries after `after`, oldest first, at most `limit`. */
  read (after: number, limit: number): Promise<FeedEntry[]>
  /** The newest position. */
  head (): Promise<number>
  /**
   * Seals what became stable: how many entries it appended (0 when another
   * instance did), and whether rows were left for later (`behind`: a
   * transaction still running held them back).
   */
  seal (): Promise<{ sealed: number, behind: boolean }>
  /** A failure nobody waits for (a read or a seal in the background). */
  onProblem (message: string, err: unknown): void
  /** How long this instance's writes wait at most before it seals them (WRITE_SEAL_MS unless given). */
  readonly writeSealMs?: number
}

/** Signals at most this often per instance for a burst of writes (ms). */
export const WRITE_SIGNAL_MS = 20
/** While no instance listens: at most one `escrito` this often, in case an `escuchando` was lost (ms). */
export const QUIET_SIGNAL_MS = 1_000
/** How long an instance with wakers only (no live stream) gathers writes before it seals them (ms). */
export const WAKER_SEAL_MS = 200
/** How long a write waits at most before its instance seals it, whoever listens (ms; CHAIN_SEAL_DELAY). */
export const WRITE_SEAL_MS = 1_000
/** The longest wait between runs while a transaction still running holds writes back (ms). */
export const HELD_BACK_MAX_MS = 30_000
/** How often an instance with listeners looks for entries whose signal it missed (ms). */
export const POLL_MS = 2_000
/** Entries read per round trip. */
const BATCH = 500

const ESCRITO = 'feed:escrito'
const AVANZADO = 'feed:avanzado'
const ESCUCHANDO = 'feed:escuchando'

export class FeedHub {
  private readonly listeners = new Set<FeedListener>()
  private readonly wakers = new Set<() => void>()
  /** The last position handed to the listeners (known once there are listeners). */
  private handed: number | undefined
  private signalTimer: NodeJS.Timeout | undefined
  private sealTimer: NodeJS.Timeout | undefined
  /** When `sealTimer` fires (ms since the epoch). */
  private sealAt = Infinity
  /** The wait before the next run while writes are held back: doubled each run that still finds them so, 0 once none is. */
  private heldBackMs = 0
  private pollTimer: NodeJS.Timeout | undefined
  private unsubscribe: Array<() => void> = []
  /** The subscription to `escrito`, held while this instance has listeners or wakers. */
  private hearing: Promise<(() => void) | undefined> | undefined
  /** Whether the last `escrito` reached an instance (unknown counts as yes). */
  private audience = true
  /** When the last `escrito` left while nobody listened. */
  private quietSince = 0
  /** `escuchando` announcements heard: an answer of nobody older than one does not silence the writer. */
  private announcements = 0
  /** Seals the chain, then reads (a run that appended nothing may follow another instance's that did). */
  private readonly sealing: CoalescedTask
  private readonly reading: CoalescedTask
  private closed = false

  constructor (private readonly deps: FeedHubDeps) {
    this.sealing = new CoalescedTask(async () => {
      // A run that failed (the database away) left its rows for later, as one a transaction still running held back.
      let behind = true
      try {
        const result = await deps.seal()
        behind = result.behind
        if (result.sealed > 0) this.sealed()
      } finally {
        // Rows left for later have no write of their own left to seal them: again, less and less often.
        this.heldBackMs = behind ? Math.min(HELD_BACK_MAX_MS, Math.max(this.heldBackMs * 2, this.writeSealMs)) : 0
        if (behind) this.sealWithin(this.heldBackMs)
        if (this.listeners.size > 0) this.reading.ask()
      }
    }, (err) => { deps.onProblem(`the event feed could not seal the global chain; retrying within ${this.heldBackMs / 1000} s or at the next write`, err) })
    this.reading = new CoalescedTask(async () => this.drain(),
      (err) => { deps.onProblem('the event feed could not be read; retrying at the next signal or poll', err) })
  }

  /** Starts hearing the other instances. */
  async start (): Promise<void> {
    this.unsubscribe = await Promise.all([
      this.deps.signals.subscribe(AVANZADO, () => { this.advanced() }),
      this.deps.signals.subscribe(ESCUCHANDO, () => { this.announcements++; this.audience = true }),
    ])
  }

  /** The last position handed to the listeners, or the head when there are none. */
  async position (): Promise<number> {
    return this.handed ?? await this.deps.head()
  }

  /**
   * Adds a listener; it hears every entry after `position()` as read when
   * it was added. The function returned removes it.
   */
  async listen (fn: FeedListener): Promise<() => void> {
    if (this.listeners.size === 0) this.handed = await this.deps.head()
    this.listeners.add(fn)
    this.activate()
    return () => {
      this.listeners.delete(fn)
      if (this.listeners.size === 0) this.handed = undefined
      this.deactivate()
    }
  }

  /**
   * Calls `fn` whenever the feed may have grown, without reading it for
   * `fn`: a reader that keeps its own position (a webhook deliverer, which
   * reads from its subscription's) needs only the wake-up. While any is
   * registered, writes are sealed promptly as for a listener.
   */
  onAdvance (fn: () => void): () => void {
    this.wakers.add(fn)
    this.activate()
    return () => {
      this.wakers.delete(fn)
      this.deactivate()
    }
  }

  private get active (): boolean { return this.listeners.size + this.wakers.size > 0 }

  private activate (): void {
    if (this.pollTimer !== undefined || this.closed) return
    this.pollTimer = setInterval(() => { this.sealSoon() }, POLL_MS)
    this.pollTimer.unref()
    // Hear every instance's writes from now on, and tell the writers that found nobody listening.
    const hearing = this.deps.signals.subscribe(ESCRITO, () => {
      if (this.listeners.size > 0) this.sealSoon()
      else if (this.wakers.size > 0) this.sealWithin(WAKER_SEAL_MS)
    }).then((unsubscribe) => {
      if (this.hearing === hearing) void this.deps.signals.publish(ESCUCHANDO, '')
      return unsubscribe
    }, (err: unknown) => {
      this.deps.onProblem('the event feed could not subscribe to writes; the poll reads them', err)
      return undefined
    })
    this.hearing = hearing
  }

  private deactivate (): void {
    if (this.active) return
    clearInterval(this.pollTimer)
    this.pollTimer = undefined
    void this.stopHearing()
  }

  private async stopHearing (): Promise<void> {
    const hearing = this.hearing
    this.hearing = undefined
    ;(await hearing)?.()
  }

  private get writeSealMs (): number { return this.deps.writeSealMs ?? WRITE_SEAL_MS }

  /** How many listeners and wakers this instance holds. */
  get size (): number { return this.listeners.size + this.wakers.size }

  /**
   * A write committed on this instance: sealed within `writeSealMs` even
   * when nobody listens, so its entry exists a second later (an on-demand
   * checkpoint holds it) and each burst of writes pays for its own sealing,
   * not a minute's at once (docs/decisions.md "Sealed as written").
   */
  written (): void {
    if (this.closed) return
    this.sealWithin(this.writeSealMs)
    if (this.signalTimer !== undefined) return
    if (!this.audience && Date.now() - this.quietSince < QUIET_SIGNAL_MS) return
    this.signalTimer = setTimeout(() => {
      this.signalTimer = undefined
      const heard = this.announcements
      void this.deps.signals.publish(ESCRITO, '').then((receivers) => {
        if (receivers === 0 && heard === this.announcements) {
          this.audience = false
          this.quietSince = Date.now()
        } else if (receivers !== undefined && receivers > 0) {
          this.audience = true
        }
      })
    }, WRITE_SIGNAL_MS)
    this.signalTimer.unref()
  }

  /** The chain grew here (a seal run of this instance): tell every instance. */
  sealed (): void {
    if (!this.closed) void this.deps.signals.publish(AVANZADO, '')
  }

  private sealSoon (): void { this.sealing.ask() }

  /** A seal within `ms`, unless one is due sooner. */
  private sealWithin (ms: number): void {
    const now = Date.now()
    if (this.closed || this.sealAt <= now + ms) return
    clearTimeout(this.sealTimer)
    this.sealAt = now + ms
    this.sealTimer = setTimeout(() => {
      this.sealTimer = undefined
      this.sealAt = Infinity
      this.sealSoon()
    }, ms)
    this.sealTimer.unref()
  }

  /** The chain grew (here or on another instance): wake the wakers, read for the listeners. */
  private advanced (): void {
    for (const fn of this.wakers) {
      try { fn() } catch (err) { this.deps.onProblem('an event wake-up failed', err) }
    }
    if (this.listeners.size > 0) this.reading.ask()
  }

  private async drain (): Promise<void> {
    for (;;) {
      const from = this.handed
      if (from === undefined || this.closed) return
      const entries = await this.deps.read(from, BATCH)
      // Listeners may have gone meanwhile, and come back with another start.
      if (entries.length === 0 || this.handed !== from) return
      this.handed = entries.at(-1)!.posicion
      for (const fn of this.listeners) {
        try { fn(entries) } catch (err) { this.deps.onProblem('an event listener failed', err) }
      }
      if (entries.length < BATCH) return
    }
  }

  async close (): Promise<void> {
    this.closed = true
    clearTimeout(this.signalTimer)
    clearTimeout(this.sealTimer)
    clearInterval(this.pollTimer)
    await this.stopHearing()
    for (const u of this.unsubscribe) u()
    this.listeners.clear()
    this.wakers.clear()
    await Promise.all([this.sealing.stop(), this.reading.stop()])
  }
}
