/** Idempotency keys in process (one instance, or the instances of one test process sharing the store). */
import type { Claim, IdempotencyStore } from './contract.js'

interface Entry {
  /** A hold's token, or undefined once answered. */
  readonly token?: string
  readonly answer?: string
  /** When it expires (ms since the epoch). */
  until: number
}

/** Expired entries dropped per claim at most, from the oldest: the map stays bounded without a timer. */
const SWEEP = 100

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>()

  private live (key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key)
    if (entry !== undefined && entry.until <= now) { this.entries.delete(key); return undefined }
    return entry
  }

  private sweep (now: number): void {
    let n = 0
    for (const [key, entry] of this.entries) {
      if (n++ >= SWEEP || entry.until > now) break
      this.entries.delete(key)
    }
  }

  async claim (key: string, token: string, leaseMs: number): Promise<Claim> {
    const now = Date.now()
    this.sweep(now)
    const entry = this.live(key, now)
    if (entry === undefined) {
      this.entries.set(key, { token, until: now + leaseMs })
      return { state: 'claimed' }
    }
    return entry.answer !== undefined ? { state: 'answered', answer: entry.answer } : { state: 'running' }
  }

  async renew (key: string, token: string, leaseMs: number): Promise<boolean> {
    const now = Date.now()
    const entry = this.live(key, now)
    if (entry?.token !== token) return false
    entry.until = now + leaseMs
    return true
  }

  async answer (key: string, token: string, answer: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    const entry = this.live(key, now)
    if (entry !== undefined && entry.token !== token) return false
    // Deleted first so the answer moves to the end of the map: the sweep meets the oldest first.
    this.entries.delete(key)
    this.entries.set(key, { answer, until: now + ttlMs })
    return true
  }

  async release (key: string, token: string): Promise<void> {
    if (this.entries.get(key)?.token === token) this.entries.delete(key)
  }
}
