/**
 * Per prefix-and-year id counters (docs/operator-guide.md "Ids and a Redis restore"). The database holds every
 * id that was stored; a counter is trusted only while it cannot be behind it.
 */
export interface SequenceStore {
  /**
   * The next number of `key`, or null when the counter is unknown (new,
   * flushed) or may be behind (Redis reconnected since this instance last
   * seeded it, or answered a number this instance already drew): then seed it.
   * With `count` (an import, docs/user-guide.md "Import (importar)") it
   * reserves that many consecutive numbers and returns the first.
   */
  next (key: string, count?: number): Promise<number | null>
  /**
   * Raises the counter to at least `floor` (the highest stored number) and
   * to every number this instance drew, and returns the next (the first of
   * `count` consecutive numbers reserved, as `next`).
   */
  seedAndNext (key: string, floor: number, count?: number): Promise<number>
  /** Gives back what this instance holds (stores/sequences/leases.ts); nothing to do in-process. */
  close (): Promise<void>
}
