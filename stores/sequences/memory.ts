/** Id counters in process (one instance, embedded mode): nothing can lose them but a restart, after which they are seeded again. */
import type { SequenceStore } from './contract.js'

export class MemorySequenceStore implements SequenceStore {
  private readonly counters = new Map<string, number>()

  async next (key: string, count = 1): Promise<number | null> {
    const cur = this.counters.get(key)
    if (cur === undefined) return null
    this.counters.set(key, cur + count)
    return cur + 1
  }

  async seedAndNext (key: string, floor: number, count = 1): Promise<number> {
    const cur = Math.max(this.counters.get(key) ?? 0, floor)
    this.counters.set(key, cur + count)
    return cur + 1
  }

  async close (): Promise<void> {}
}
