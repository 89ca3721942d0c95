/**
 * The calls of one turn of the event loop, run as one (docs/performance.md
 * "One Redis script per turn"): `call(input)` waits until `setImmediate`
 * fires, then every input collected so far goes, in call order, to ONE
 * `run(inputs)`, whose i-th output answers the i-th caller. When `run`
 * fails, every caller of that batch fails with the same error.
 *
 * setImmediate rather than a microtask: the requests parsed in one poll
 * phase of the loop each make their call before it fires, so they share a
 * batch (ioredis's auto-pipelining waits the same way).
 *
 * A turn with more than `max` calls is run in slices of `max`, each its
 * own batch: one script's arguments stay well within what a function call
 * can spread and one script run stays short for Redis's other clients.
 *
 * `inFlight` bounds the batches running at once: the calls made while that
 * many run wait, and go together in the turn after one of them ends, or
 * once `maxWaitMs` (1 s) passed without one ending: a batch that hangs
 * (a stalled database, a lock) must not hold the calls behind it for
 * longer than the pool would have (their batch then waits for a
 * connection as any query does, up to the pool's own limit). A
 * module's reads by id set it to the database pool's size (db/row-batch.ts):
 * a batch formed while every connection is busy would only wait for one,
 * and the calls arriving meanwhile would form more small batches behind
 * it, where one waiting batch takes them all (docs/performance.md "The
 * embedded default's statements"). A module's inserts set it to one
 * (db/insert-batch.ts): the creates arriving while a statement of them
 * runs make the next one larger (docs/performance.md "One create
 * statement at a time").
 *
 * Each user (a Redis store, a module's inserts: db/insert-batch.ts) owns its
 * instances: nothing here is shared between clients or tables.
 */

interface Waiting<I, O> {
  readonly input: I
  readonly resolve: (output: O) => void
  readonly reject: (err: unknown) => void
}

export class Coalescer<I, O> {
  private pending: Array<Waiting<I, O>> = []
  /** A flush waits for `setImmediate`. */
  private scheduled = false
  /** Batches started and not yet answered. */
  private running = 0
  /** Set while calls wait for a running batch to end, from the last one that ended: when it fires, they go anyway. */
  private overdue: NodeJS.Timeout | undefined

  /** `run` answers one output per input, in their order. */
  constructor (private readonly run: (inputs: readonly I[]) => Promise<readonly O[]>, private readonly max = 1000, private readonly inFlight = Infinity, private readonly maxWaitMs = 1000) {}

  /** The flush `setImmediate` runs: one function for every turn, not a closure each. */
  private readonly flushNow = (): void => { this.flush(this.inFlight) }

  /** `input`'s output, from the batch of this turn (not `async`: no second promise per call). */
  call (input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject })
      this.schedule()
    })
  }

  private schedule (): void {
    if (this.scheduled) return
    if (this.running < this.inFlight) {
      this.scheduled = true
      setImmediate(this.flushNow)
    } else if (this.overdue === undefined) {
      this.overdue = setTimeout(() => { this.overdue = undefined; this.flush(Infinity) }, this.maxWaitMs).unref()
    }
  }

  /** Starts the pending calls' batches while fewer than `limit` run. */
  private flush (limit: number): void {
    this.scheduled = false
    while (this.pending.length > 0 && this.running < limit) void this.start(this.pending.splice(0, this.max))
    if (this.pending.length > 0) this.schedule()
  }

  /** One batch: its calls answered, then the next batch scheduled (one await, not a chain of three reactions: a lone create runs cold). */
  private async start (batch: Array<Waiting<I, O>>): Promise<void> {
    this.running++
    try {
      const out = await this.run(batch.map((w) => w.input))
      if (out.length !== batch.length) throw new Error(`a batch of ${batch.length} calls was answered with ${out.length} outputs`)
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(out[i]!)
    } catch (err) {
      for (const w of batch) w.reject(err)
    } finally {
      this.running--
      if (this.overdue !== undefined) {
        clearTimeout(this.overdue)
        this.overdue = undefined
      }
      if (this.pending.length > 0) this.schedule()
    }
  }
}
