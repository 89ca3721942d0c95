/** A fixed-window counter after one more hit. */
export interface Counter {
  readonly count: number
  /** Milliseconds until the window ends and the count starts again. */
  readonly resetMs: number
}

export interface Window {
  readonly key: string
  readonly windowMs: number
}

/** Request counters shared by all instances (docs/user-guide.md "Rate limits"), in fixed windows. */
export interface RateLimitStore {
  /** Counts one hit against each window and returns the counts, in order. */
  hit (windows: readonly Window[]): Promise<Counter[]>
}
