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

  /** `run` answers one output per input, in their order. */
  constructor (private readonly run: (inputs: readonly I[]) => Promise<readonly O[]>, private readonly max = 1000) {}

  /** `input`'s output, from the batch of this turn (not `async`: no second promise per call). */
  call (input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => { this.flush() })
      this.pending.push({ input, resolve, reject })
    })
  }

  private flush (): void {
    const pending = this.pending
    this.pending = []
    for (let i = 0; i < pending.length; i += this.max) this.start(pending.slice(i, i + this.max))
  }

  private start (batch: Array<Waiting<I, O>>): void {
    let outputs: Promise<readonly O[]>
    try {
      outputs = this.run(batch.map((w) => w.input))
    } catch (err) {
      outputs = Promise.reject(err)
    }
    outputs.then((out) => {
      if (out.length !== batch.length) throw new Error(`a batch of ${batch.length} calls was answered with ${out.length} outputs`)
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(out[i]!)
    }).catch((err: unknown) => {
      for (const w of batch) w.reject(err)
    })
  }
}
