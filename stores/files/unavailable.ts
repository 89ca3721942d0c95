/**
 * A file store that is down answers 503 with Retry-After, like the
 * database and Redis (docs/user-guide.md "Evidence files"): a full volume
 * (ENOSPC), a lost network volume, an object store that cannot be reached
 * or answers 5xx. Told apart from the client's own failures (an upload cut
 * short, 413), which never carry these codes (staging.ts `intake`).
 */
import { DETAILS, UnavailableError } from '../../core/errors.js'

/** How long a client waits before trying again (seconds): a volume freed or a store back takes minutes, not seconds. */
export const RETRY_AFTER_S = 30

/** Codes of a volume that is full, read-only or gone (a lost NFS or CSI mount). */
const VOLUME_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'ESTALE', 'ENOTCONN', 'ETIMEDOUT', 'EHOSTDOWN'])

/** Codes of a server that cannot be reached or dropped the connection. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH',
  'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
])

interface ErrorLike {
  name?: unknown
  code?: unknown
  cause?: unknown
  $metadata?: { httpStatusCode?: number }
}

/** Why `err` means the store is down (a code, fit for a log line), or undefined when it does not. */
export function storeOutageReason (err: unknown): string | undefined {
  let e = err as ErrorLike | undefined
  for (let depth = 0; depth < 5 && e !== null && typeof e === 'object'; depth++) {
    if (e instanceof UnavailableError) return e.reason
    const code = typeof e.code === 'string' ? e.code : ''
    if (VOLUME_CODES.has(code) || NETWORK_CODES.has(code)) return code
    // The AWS SDK: a request that timed out, or a server error (S3's 500, 503 SlowDown).
    if (e.name === 'TimeoutError' || e.name === 'RequestTimeout') return String(e.name)
    const status = e.$metadata?.httpStatusCode
    if (typeof status === 'number' && status >= 500) return `${String(e.name)} (HTTP ${status})`
    e = e.cause as ErrorLike | undefined
  }
  return undefined
}

/** `err` as the 503 of the store `where` when it means the store is down; else `err` itself. */
export function outageOr (err: unknown, where: string): unknown {
  const reason = storeOutageReason(err)
  if (reason === undefined || err instanceof UnavailableError) return err
  return new UnavailableError('archivos', `file store (${where})`, reason, [{ campo: 'archivos', mensaje: DETAILS.ALMACEN_ARCHIVOS_NO_DISPONIBLE }], RETRY_AFTER_S)
}

/** `work`, its failure turned into a 503 when the store `where` is down. */
export async function storeCall<T> (where: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    throw outageOr(err, where)
  }
}
