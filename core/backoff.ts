/**
 * Waiting for a dependency at start-up (docs/operator-guide.md "Start-up waits for PostgreSQL and Redis"): try, and on failure wait
 * 1 s, 2 s, 4 s … up to 30 s between attempts, saying each time what it
 * waits for and when it tries again; give up only after `deadlineMs`
 * (STARTUP_WAIT; 0: never) or on an error that waiting cannot fix (`fatal`,
 * e.g. a wrong password).
 */
import { ConfigError } from './errors.js'

export const FIRST_DELAY_MS = 1000
export const MAX_DELAY_MS = 30_000

export interface Waiting {
  /** What is awaited, for the log and the final error: "PostgreSQL at postgres://db:5432/policia". */
  readonly what: string
  readonly attempt: number
  /** Why the last attempt failed. */
  readonly reason: string
  readonly nextAttemptInMs: number
}

export interface WaitOptions {
  readonly what: string
  /** Give up after this long (ms); 0: never. */
  readonly deadlineMs: number
  /** Called before each pause. */
  readonly onWait: (w: Waiting) => void
  /** Errors that waiting cannot fix: thrown at once. */
  readonly fatal?: (err: unknown) => boolean
  /** The fix to print when giving up. */
  readonly hint: string
}

export function delayFor (attempt: number): number {
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt - 1, 10))
}

const reasonOf = (err: unknown): string => {
  const e = err as { message?: string, code?: string } | undefined
  const message = e?.message !== undefined && e.message !== '' ? e.message : String(err)
  return e?.code !== undefined && !message.includes(e.code) ? `${message} (${e.code})` : message
}

export async function waitFor<T> (attempt: () => Promise<T>, opts: WaitOptions): Promise<T> {
  const started = Date.now()
  for (let n = 1; ; n++) {
    try {
      return await attempt()
    } catch (err) {
      const reason = reasonOf(err)
      if (opts.fatal?.(err) === true) throw new ConfigError(`${opts.what} refused the connection: ${reason}; ${opts.hint}`)
      const delay = delayFor(n)
      if (opts.deadlineMs > 0 && Date.now() - started + delay > opts.deadlineMs) {
        throw new ConfigError(`${opts.what} was still unreachable after ${Math.round((Date.now() - started) / 1000)} s (STARTUP_WAIT): ${reason}; ${opts.hint}, or raise STARTUP_WAIT (0 waits for ever)`)
      }
      opts.onWait({ what: opts.what, attempt: n, reason, nextAttemptInMs: delay })
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}
