/**
 * One open live stream (docs/user-guide.md "Events: the live stream
 * (eventos)"): its cursor in the feed, the replay after `Last-Event-ID`,
 * live batches from the hub, the filtering, and the timers that keep it
 * honest (a heartbeat comment, the caller's session and permission checked
 * again, its slot renewed, the token's expiry). No HTTP here: `deps`
 * writes the messages and looks things up.
 *
 * No gap, no duplicate: the stream listens first, then reads the database
 * from its cursor; every entry at or below the cursor is dropped, and a
 * live batch that starts beyond cursor + 1 waits for the gap to be read.
 * Work is done one batch at a time, in feed order. While idle a stream
 * holds timers only: every read forks an EntityManager that takes a
 * connection for that query alone.
 */
import type { ModuleDef } from '../../core/registry/types.js'
import type { FeedEvent } from './event-view.js'
import type { FeedEntry } from './feed.js'
import type { FeedListener } from './feed-hub.js'
import type { RowPredicate } from './row-filter.js'
import { tipoOf } from './stream-query.js'

/** Why a stream ended, sent as `event: fin` (`data: {"motivo": …}`). */
export type EndReason = 'sesion' | 'expirado' | 'permisos' | 'limite' | 'lento' | 'cierre' | 'error'

export interface LiveStreamDeps {
  /** Feed entries after `after` of `modulos`, oldest first, at most `limit`. */
  read (after: number, limit: number, modulos: readonly string[]): Promise<FeedEntry[]>
  head (): Promise<number>
  /** When the entry at `posicion` was written (undefined: no such entry). */
  writtenAt (posicion: number): Promise<Date | undefined>
  /** Adds a listener to the feed; the function returned removes it. */
  listen (fn: FeedListener): Promise<() => void>
  /** The events of `entries` (all of `mod`) the caller may see now, decrypted or withheld, reads logged. */
  view (mod: ModuleDef, entries: FeedEntry[]): Promise<FeedEvent[]>
  /** The caller's session, user and permissions checked again: a reason to end, or undefined. */
  recheck (): Promise<EndReason | undefined>
  /** Keeps the stream's slot; false when it was lost (the lease ran out and others took the slots). */
  renew (): Promise<boolean>
  /** Writes to the client; resolves once the client took it (or went away). */
  write (text: string): Promise<void>
  /** Ends the response and frees the slot (called once). */
  close (): void
  onProblem (message: string, err: unknown): void
}

export interface LiveStreamOptions {
  readonly modulos: readonly ModuleDef[]
  readonly tipos?: ReadonlySet<string>
  /** A one-module stream's list filters over the version's stored row. */
  readonly filter?: RowPredicate
  /** The position the client last received (`Last-Event-ID`). */
  readonly lastEventId?: number
  readonly retentionMs: number
  readonly heartbeatMs: number
  /** How often the session and permissions are checked again (≤ 2 s: a revoked stream ends within 5 s). */
  readonly recheckMs: number
  /** How often the slot's lease is renewed. */
  readonly renewMs: number
  /** When the token expires (ms since the epoch). */
  readonly expiresAt: number
}

/** Entries read per round trip. */
const BATCH = 500
/** Live batches a slow client may leave waiting before its stream is ended (it resumes with Last-Event-ID). */
const MAX_WAITING = 200

/** One SSE message: `data` is JSON on one line (JSON.stringify escapes line breaks). */
export function message (event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

export class LiveStream {
  private cursor = 0
  private work: Promise<void> = Promise.resolve()
  private waiting = 0
  private ended = false
  private unlisten: (() => void) | undefined
  private readonly timers: NodeJS.Timeout[] = []
  private readonly byName: ReadonlyMap<string, ModuleDef>
  private readonly names: readonly string[]

  constructor (private readonly deps: LiveStreamDeps, private readonly opts: LiveStreamOptions) {
    this.byName = new Map(opts.modulos.map((m) => [m.name, m]))
    this.names = opts.modulos.map((m) => m.name)
  }

  /** Sends what was missed since `Last-Event-ID` (or a reload), then goes live. */
  async start (): Promise<void> {
    await this.deps.write(': conectado\n\n')
    const head = await this.deps.head()
    this.cursor = head
    const last = this.opts.lastEventId
    if (last !== undefined && last !== head) {
      // Resumable when the client's position is in this feed and the first entry it missed is within the retention.
      const first = last < head ? await this.deps.writtenAt(last + 1) : undefined
      if (first !== undefined && first.getTime() >= Date.now() - this.opts.retentionMs) this.cursor = last
      else await this.deps.write(message('recargar', { motivo: 'retencion', posicion: head }, head))
    }
    this.unlisten = await this.deps.listen((batch) => { this.enqueue(batch) })
    this.enqueue(undefined)
    this.every(this.opts.heartbeatMs, async () => { await this.deps.write(': latido\n\n') })
    this.every(this.opts.recheckMs, async () => {
      const reason = await this.deps.recheck()
      if (reason !== undefined) await this.end(reason)
    })
    this.every(this.opts.renewMs, async () => { if (!await this.deps.renew()) await this.end('limite') })
    const untilExpiry = this.opts.expiresAt - Date.now()
    // setTimeout takes at most 2^31-1 ms (24.8 days); a token lives 7.
    this.timers.push(setTimeout(() => { void this.end('expirado') }, Math.max(0, Math.min(untilExpiry, 2 ** 31 - 1))))
    if (this.ended) this.stop()
  }

  private every (ms: number, fn: () => Promise<void>): void {
    let running = false
    this.timers.push(setInterval(() => {
      if (running || this.ended) return
      running = true
      fn().catch((err) => { this.deps.onProblem('a live stream timer failed', err) }).finally(() => { running = false })
    }, ms))
  }

  /** A live batch (or, undefined, the catch-up from the database), handled after those before it. */
  private enqueue (batch: readonly FeedEntry[] | undefined): void {
    if (this.ended) return
    if (++this.waiting > MAX_WAITING) { void this.end('lento'); return }
    this.work = this.work.then(async () => {
      this.waiting--
      if (this.ended) return
      if (batch === undefined) return this.catchUp(Number.POSITIVE_INFINITY)
      if (batch.length === 0) return
      if (batch[0]!.posicion > this.cursor + 1) await this.catchUp(batch[0]!.posicion - 1)
      await this.send(batch.filter((e) => e.posicion > this.cursor), batch.at(-1)!.posicion)
    }).catch(async (err) => {
      this.deps.onProblem('a live stream could not read or send its events; it ends (the client resumes with Last-Event-ID)', err)
      await this.end('error')
    })
  }

  /** Entries of the stream's modules after the cursor up to `until`, from the database. */
  private async catchUp (until: number): Promise<void> {
    for (;;) {
      const read = await this.deps.read(this.cursor, BATCH, this.names)
      const entries = read.filter((e) => e.posicion <= until)
      const full = read.length === BATCH && entries.length === read.length
      // A short read saw every entry sealed then, so all up to a live batch's start (those of other modules are gaps).
      const last = entries.at(-1)?.posicion ?? this.cursor
      await this.send(entries, full || !Number.isFinite(until) ? last : until)
      if (!full || this.ended) return
    }
  }

  /** Sends the events of `entries` the caller may see and the stream asks for; the cursor moves to `through`. */
  private async send (entries: readonly FeedEntry[], through: number): Promise<void> {
    const { tipos, filter } = this.opts
    const chosen = entries.filter((e) => this.byName.has(e.modulo) && (tipos === undefined || tipos.has(tipoOf(e))) && (filter === undefined || filter(e.datos)))
    const events = new Map<number, FeedEvent>()
    for (const mod of this.opts.modulos) {
      const own = chosen.filter((e) => e.modulo === mod.name)
      if (own.length > 0) for (const ev of await this.deps.view(mod, own)) events.set(ev.posicion, ev)
    }
    for (const e of chosen) {
      const ev = events.get(e.posicion)
      if (ev !== undefined && !this.ended) await this.deps.write(message(ev.tipo, ev, ev.posicion))
    }
    this.cursor = Math.max(this.cursor, through)
  }

  /** Says why and closes (once). */
  async end (motivo: EndReason): Promise<void> {
    if (this.ended) return
    this.stop()
    try {
      await this.deps.write(message('fin', { motivo }))
    } finally {
      this.deps.close()
    }
  }

  /** Stops listening and every timer (the client went away, or the stream ended). */
  stop (): void {
    this.ended = true
    this.unlisten?.()
    this.unlisten = undefined
    for (const t of this.timers) { clearInterval(t); clearTimeout(t) }
    this.timers.length = 0
  }
}
