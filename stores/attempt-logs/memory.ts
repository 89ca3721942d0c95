/** The login lock-out's attempt logs in process (one instance, embedded mode). */
import type { AttemptLog, AttemptLogStore, AttemptResult, LogFill } from './contract.js'

export class MemoryAttemptLogStore implements AttemptLogStore {
  private readonly logs = new Map<string, Array<{ at: number, id: string }>>()

  /** Index → the log keys written under it. */
  private readonly indexes = new Map<string, Set<string>>()

  async attempt (logs: readonly AttemptLog[], id: string, index?: string): Promise<AttemptResult> {
    const now = Date.now()
    let retryMs = 0
    const current = logs.map(({ key, windowMs, max }) => {
      const log = (this.logs.get(key) ?? []).filter((e) => e.at > now - windowMs)
      this.logs.set(key, log)
      // Room again once the entry that makes the log full has left the window.
      if (log.length >= max) retryMs = Math.max(retryMs, log[log.length - max]!.at + windowMs - now, 1)
      return log
    })
    if (retryMs > 0) return { allowed: false, retryMs, counts: current.map((log) => log.length) }
    for (const log of current) log.push({ at: now, id })
    if (index !== undefined) {
      const keys = this.indexes.get(index) ?? new Set<string>()
      for (const { key } of logs) keys.add(key)
      this.indexes.set(index, keys)
    }
    return { allowed: true, retryMs: 0, counts: current.map((log) => log.length) }
  }

  async fill ({ key, windowMs, max }: AttemptLog): Promise<LogFill> {
    const now = Date.now()
    const log = (this.logs.get(key) ?? []).filter((e) => e.at > now - windowMs)
    return { count: log.length, retryMs: log.length >= max ? Math.max(log[log.length - max]!.at + windowMs - now, 1) : 0 }
  }

  async forget (key: string, id: string): Promise<void> {
    const log = this.logs.get(key)
    if (log !== undefined) this.logs.set(key, log.filter((e) => e.id !== id))
  }

  async reset (key: string): Promise<void> {
    this.logs.delete(key)
  }

  async clear (index: string, keys: readonly string[]): Promise<number> {
    let cleared = 0
    for (const key of new Set([...(this.indexes.get(index) ?? []), ...keys])) {
      if ((this.logs.get(key)?.length ?? 0) > 0) cleared++
      this.logs.delete(key)
    }
    this.indexes.delete(index)
    return cleared
  }
}
