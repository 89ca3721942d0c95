/** Stream slots in process (one instance, or the instances of one test process sharing the store). */
import type { StreamSlotStore } from './contract.js'

export class MemoryStreamSlotStore implements StreamSlotStore {
  /** Owner → slot → when its lease ends (ms since the epoch). */
  private readonly owners = new Map<string, Map<string, number>>()

  async acquire (owner: string, slot: string, max: number, leaseMs: number): Promise<boolean> {
    const now = Date.now()
    const slots = this.owners.get(owner) ?? new Map<string, number>()
    for (const [s, until] of slots) if (until <= now) slots.delete(s)
    if (!slots.has(slot) && slots.size >= max) return false
    slots.set(slot, now + leaseMs)
    this.owners.set(owner, slots)
    return true
  }

  async release (owner: string, slot: string): Promise<void> {
    const slots = this.owners.get(owner)
    slots?.delete(slot)
    if (slots?.size === 0) this.owners.delete(owner)
  }
}
