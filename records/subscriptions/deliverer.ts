/**
 * The webhook deliverer of one instance (docs/user-guide.md "Webhooks
 * (suscripciones)"; docs/operator-guide.md "Webhooks"). Every `leaseMs / 4` (and
 * at once when a subscription is written anywhere) it renews and takes
 * leases (db/delivery-statements.ts `claim`); for each subscription it holds, one
 * worker walks the feed from the subscription's stored position, one
 * event at a time, in feed order:
 * - an event its tipos, filtro or role does not cover moves the position
 *   on without a POST;
 * - a covered one is POSTed (send-event.ts); delivered or given up (a 4xx),
 *   the position moves on; otherwise it is tried again after a back-off
 *   that starts at `retryBaseMs` and doubles (at most an hour); the first
 *   failure `retryWindowMs` or more after the first one pauses the
 *   subscription as failing.
 * The hub (`listen`, the feed hub's `onAdvance`) only wakes the workers; what is delivered is read
 * from the database, so a lost wake-up delays and never skips. A clean stop
 * (close) lets an attempt in flight finish (at most the 10 s timeout) and
 * records it before it gives its leases back. Not a
 * singleton: the app holds one (plugins/webhooks.ts).
 */
import type { Db } from '../../db/statement.js'
import { CoalescedTask } from '../../core/coalesced-task.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import type { DeliveryResult } from '../../db/subscription-entities.js'
import type { FeedEntry } from '../events/feed.js'
import type { FeedEvent } from '../events/event-view.js'
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { advance, claim, failing, pause, readState, recordAttempts, release, type AttemptRow, type DeliveryState } from '../../db/delivery-statements.js'
import { sendEvent, type Agents, type Attempt } from './send-event.js'
import { readSubscription, type Subscription } from './subscription.js'

/** Longest wait between two attempts at one event (each delay is at most double the one before). */
export const MAX_RETRY_DELAY_MS = 3_600_000
/** Feed entries a worker reads per round trip. */
const BATCH = 100
/** How long an idle worker waits for a wake-up before looking again. */
const IDLE_MS = 5_000
/** Delivered events recorded (attempts and position) together, at most this many at a time… */
const FLUSH_EVERY = 50
/** …or after this long (ms): what /entregas shows is at most this late during a burst. */
const FLUSH_MS = 250

export interface DelivererDeps {
  readonly module: ModuleDef
  /** This instance's name in the leases. */
  readonly instance: string
  readonly leaseMs: number
  readonly retryBaseMs: number
  readonly retryWindowMs: number
  readonly allowPrivate: boolean
  fork (): Db
  /** Up to `limit` entries of `modulos` after `after`. */
  read (em: Db, after: number, limit: number, modulos: readonly string[]): Promise<FeedEntry[]>
  head (em: Db): Promise<number>
  /** The event as the subscription may receive it, or undefined when its role or filter does not cover it (decrypted values logged as its reads). */
  view (em: Db, sub: Subscription, entry: FeedEntry): Promise<FeedEvent | undefined>
  /** The subscription's secret in clear. */
  secret (state: DeliveryState): string
  /** Wakes `fn` on new feed entries; the function returned stops it. */
  listen (fn: () => void): Promise<() => void>
  onAttempt (resultado: DeliveryResult): void
  /** Tells every instance's deliverer to look again (a subscription was resumed or replayed). */
  announce (): void
  onProblem (message: string, err: unknown): void
}

export interface Lag { readonly suscripcion: string, readonly posiciones: number, readonly segundos: number }

export class Deliverer {
  private readonly workers = new Map<string, Promise<void>>()
  private held = new Set<string>()
  private readonly lag = new Map<string, Lag>()
  private wakers = new Set<() => void>()
  private timer: NodeJS.Timeout | undefined
  /** Lease rounds, one at a time; asked during one, one more after it. */
  private readonly claiming = new CoalescedTask(async () => this.claim(), (err) => { this.deps.onProblem('webhook leases could not be renewed; retrying', err) })
  private unlisten: (() => void) | undefined
  private closed = false
  /** Connections kept alive per target: a burst is not one TCP (and TLS) handshake per event. */
  private readonly agents: Agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 4 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 4 }) }

  constructor (private readonly deps: DelivererDeps) {}

  start (): void {
    this.timer = setInterval(() => { this.tick() }, Math.max(50, Math.floor(this.deps.leaseMs / 4)))
    this.timer.unref()
    this.tick()
  }

  /** A subscription was written, resumed or replayed: look again now. */
  tick (): void {
    if (this.closed) return
    this.wakeAll()
    this.claiming.ask()
  }

  /** A subscription's state moved outside the deliverer (resumed, replayed): every instance looks again. */
  announce (): void { this.deps.announce() }

  /** Lag of the subscriptions this instance delivers (metrics). */
  lags (): Lag[] { return [...this.lag.values()] }

  private async claim (): Promise<void> {
    const { module: mod } = this.deps
    const ids = await claim(this.deps.fork(), mod.table, valueColumn(mod.fieldMap.get('activa')!), this.deps.instance, this.deps.leaseMs)
    if (this.closed) return
    this.held = new Set(ids)
    for (const id of ids) {
      if (this.workers.has(id)) continue
      this.workers.set(id, this.work(id).catch((err: unknown) => { this.deps.onProblem(`webhook delivery of ${id} stopped; the next lease round restarts it`, err) })
        .finally(() => { this.workers.delete(id); this.lag.delete(id) }))
    }
    if (this.workers.size > 0 && this.unlisten === undefined) this.unlisten = await this.deps.listen(() => { this.wakeAll() })
    else if (this.workers.size === 0 && this.unlisten !== undefined) { this.unlisten(); this.unlisten = undefined }
  }

  private wakeAll (): void {
    const wakers = this.wakers
    this.wakers = new Set()
    for (const w of wakers) w()
  }

  /** Waits `ms` or until woken. */
  private async sleep (ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, Math.max(0, ms))
      t.unref()
      function done (): void { clearTimeout(t); resolve() }
      this.wakers.add(done)
    })
  }

  private async work (id: string): Promise<void> {
    const { deps } = this
    /** The event being tried, kept across retries so its body (and its read-log entry) is made once. */
    let pending: { posicion: number, event: FeedEvent } | undefined
    while (!this.closed && this.held.has(id)) {
      const em = deps.fork()
      const state = await readState(em, id)
      const sub = await readSubscription(em, deps.module, id)
      if (state === undefined || state.pausada || sub === undefined || !sub.activa) return
      const wait = (state.proximoIntento?.getTime() ?? 0) - Date.now()
      if (wait > 0) { await this.sleep(wait); continue }
      const head = await deps.head(em)
      const entries = await deps.read(em, state.posicion, BATCH, sub.modulos)
      this.lag.set(id, { suscripcion: id, posiciones: Math.max(0, head - state.posicion), segundos: entries[0] === undefined ? 0 : Math.max(0, (Date.now() - entries[0].fecha.getTime()) / 1000) })
      if (entries.length === 0) {
        // Nothing of its modules up to the head read before: the position may move there (lag in positions stays honest).
        if (head > state.posicion) await advance(em, id, deps.instance, state.posicion, head)
        else await this.sleep(IDLE_MS)
        continue
      }
      // Delivered events are recorded and the position moved together, every
      // FLUSH_EVERY events or FLUSH_MS, before a failure is handled and at the
      // batch's end: a crash in between delivers them again (at least once),
      // and a burst costs two statements per FLUSH_EVERY events, not per event.
      let stored = state.posicion
      let reached = state.posicion
      const delivered: AttemptRow[] = []
      let flushedAt = Date.now()
      const flush = async (): Promise<boolean> => {
        flushedAt = Date.now()
        if (reached === stored) return true
        await recordAttempts(em, delivered.splice(0))
        const moved = await advance(em, id, deps.instance, stored, reached)
        stored = reached
        return moved
      }
      let held = true
      // The secret as it is now, read after the entries: a secret changed before an event was written signs it.
      const secret = deps.secret(await readState(em, id) ?? state)
      for (const entry of entries) {
        if (this.closed || !this.held.has(id)) break
        const event = pending?.posicion === entry.posicion ? pending.event : await deps.view(em, sub, entry)
        if (event === undefined) { reached = entry.posicion; continue }
        pending = { posicion: entry.posicion, event }
        const attempt = await sendEvent({ url: sub.url, messageId: `${id}-${entry.posicion}`, body: JSON.stringify(event), secret, allowPrivate: deps.allowPrivate, agents: this.agents })
        // The cause (refused, reset, timed out, an address not public) is the operator's: the attempt records only `sin respuesta`.
        if (attempt.cause !== undefined) deps.onProblem(`webhook delivery of ${id} at ${entry.posicion} got no answer (recorded as "${attempt.error ?? ''}")`, attempt.cause)
        if (attempt.outcome !== 'reintento') {
          delivered.push({ suscripcion: id, fecha: new Date(), posicion: entry.posicion, estado: attempt.estado, latencia_ms: attempt.latencia_ms, error: attempt.error, resultado: attempt.outcome })
          deps.onAttempt(attempt.outcome)
          reached = entry.posicion
          pending = undefined
          // Closing: the attempt in flight was let finish and is recorded with the rest below, so a clean stop sends nothing twice.
          if (this.closed) break
          if ((delivered.length >= FLUSH_EVERY || Date.now() - flushedAt >= FLUSH_MS) && !(held = await flush())) break
          continue
        }
        // A failure while closing is left to the next holder, which tries the event again.
        if (this.closed) break
        // The failure in progress is this event's only when the position has not moved since it was read.
        const failure = reached === state.posicion ? state : { fallandoDesde: null, intentos: 0 }
        if ((held = await flush())) await this.fail(em, sub, failure, stored, entry.posicion, attempt)
        break
      }
      if (held) await flush()
    }
  }

  /** Records a failed attempt at the event at `posicion` (the position stands at `at`): waits and retries, or pauses once the window is over. */
  private async fail (em: Db, sub: Subscription, state: Pick<DeliveryState, 'fallandoDesde' | 'intentos'>, at: number, posicion: number, attempt: Attempt): Promise<void> {
    const { deps } = this
    const now = new Date()
    const base = { suscripcion: sub.id, fecha: now, posicion, estado: attempt.estado, latencia_ms: attempt.latencia_ms, error: attempt.error }
    // A failure of an event already failing keeps its start (the state is of that event: its position has not moved).
    const since = state.fallandoDesde ?? now
    const intentos = state.intentos + 1
    const delay = Math.min(MAX_RETRY_DELAY_MS, deps.retryBaseMs * 2 ** Math.min(intentos - 1, 30))
    // Retried for the whole window: the failure that comes after it pauses.
    if (now.getTime() - since.getTime() >= deps.retryWindowMs) {
      await recordAttempts(em, [{ ...base, resultado: 'pausada' }])
      deps.onAttempt('pausada')
      await pause(em, sub.id, deps.instance, at)
      return
    }
    await recordAttempts(em, [{ ...base, resultado: 'reintento' }])
    deps.onAttempt('reintento')
    await failing(em, sub.id, deps.instance, at, since, intentos, new Date(now.getTime() + delay))
  }

  async close (): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    this.unlisten?.()
    this.wakeAll()
    await this.claiming.stop()
    await Promise.all(this.workers.values())
    this.agents.http.destroy()
    this.agents.https.destroy()
    await release(this.deps.fork(), this.deps.instance).catch((err: unknown) => { this.deps.onProblem('webhook leases could not be given back; they expire by themselves', err) })
  }
}
