/**
 * A background task that runs one at a time: asked while it runs, it runs
 * once more afterwards (however often it was asked meanwhile), so nothing
 * asked is missed and a burst of asks costs two runs. Errors go to
 * `onError`; nobody awaits a run but `idle()`.
 */
export class CoalescedTask {
  private running: Promise<void> | undefined
  private again = false
  private stopped = false

  constructor (private readonly run: () => Promise<void>, private readonly onError: (err: unknown) => void) {}

  ask (): void {
    if (this.stopped) return
    if (this.running !== undefined) { this.again = true; return }
    this.running = (async () => {
      do {
        this.again = false
        try { await this.run() } catch (err) { this.onError(err) }
      } while (this.again && !this.stopped)
    })().finally(() => { this.running = undefined })
  }

  /** No more runs; resolves when the current one ends. */
  async stop (): Promise<void> {
    this.stopped = true
    await this.running
  }
}
