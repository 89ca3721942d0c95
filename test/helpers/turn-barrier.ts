/**
 * Calls held until a number of them arrived, then let go together: their
 * continuations run in one burst of microtasks, so whatever each does next
 * happens in the same turn of the event loop (test/integration/create-batch
 * and read-batch: which calls share a turn's batch is decided by the test,
 * not by timing).
 */
export class TurnBarrier {
  private waiting: Array<() => void> = []
  private expected = 0
  /** How many holds were let go: a test checks its hold was, or it did not decide the turn. */
  releases = 0

  /** The next `n` calls of `arrive` wait for each other. */
  hold (n: number): void { this.expected = n }

  /** Returns at once unless a hold is on; then when its last call arrived. */
  async arrive (): Promise<void> {
    if (this.expected === 0) return
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve)
      if (this.waiting.length < this.expected) return
      const all = this.waiting
      this.waiting = []
      this.expected = 0
      this.releases++
      for (const go of all) go()
    })
  }
}
