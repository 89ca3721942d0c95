/**
 * What a client's `Idempotency-Key` holds (docs/user-guide.md "Retries and
 * Idempotency-Key"): nothing, a claim while its first request runs (a lease
 * that expires unless renewed, so an instance that died frees the key by
 * itself), or the first request's answer, kept for a while. `key` is
 * already scoped to the caller; `answer` is opaque to the store.
 */
export type Claim =
  /** The key was free: it is now held by the given token for the lease. */
  | { readonly state: 'claimed' }
  /** Another request holds it (the first is still running). */
  | { readonly state: 'running' }
  /** The first request answered: its answer as it was kept. */
  | { readonly state: 'answered', readonly answer: string }

export interface IdempotencyStore {
  /** Holds `key` as `token` for `leaseMs` when it is free; otherwise says what holds it. One atomic step. */
  claim (key: string, token: string, leaseMs: number): Promise<Claim>
  /** Extends `token`'s hold by `leaseMs`; false when it no longer holds the key. */
  renew (key: string, token: string, leaseMs: number): Promise<boolean>
  /**
   * Keeps `answer` for `ttlMs` in place of `token`'s hold (or of nothing,
   * when the hold expired unclaimed); false, keeping nothing, when another
   * request holds the key or answered it.
   */
  answer (key: string, token: string, answer: string, ttlMs: number): Promise<boolean>
  /** Lets go of `token`'s hold (the request failed or was not completed); nothing when it no longer holds it. */
  release (key: string, token: string): Promise<void>
}
