/** A fixed-window counter after one more hit. */
export interface Counter {
  readonly count: number
  /** Milliseconds until the window ends and the count starts again. */
  readonly resetMs: number
}

export interface Window {
  readonly key: string
  readonly windowMs: number
  /** The limit, when the caller says it: a large one may be counted ahead of Redis (stores/admission.ts). */
  readonly max?: number
}

/** Request counters shared by all instances (docs/user-guide.md "Rate limits"), in fixed windows. */
export interface RateLimitStore {
  /** Counts one hit against each window and returns the counts, in order. */
  hit (windows: readonly Window[]): Promise<Counter[]>
}
