/**
 * The login lock-out (docs/user-guide.md "Rate limits"): failed logins of one username in
 * sliding 15-minute logs in the shared store, so every instance counts
 * together.
 *
 * - A client that presents a valid device value (core/device.ts) for the
 *   user is judged by its own log only: 10 failures lock that device for
 *   that user, and it is then treated as absent. Failures from other
 *   clients never refuse it.
 * - Any other client: 10 failures from one address lock the username for
 *   that address; 100 from any addresses lock it for every client without
 *   a valid device value.
 * - A wrong current password in `PUT /me/password` counts in that
 *   address's log and in the session's own (10), not in the total: a
 *   stolen token gets no more guesses, and an attack from many addresses
 *   does not keep the owner from changing the password.
 *
 * Every attempt is logged before the password is checked, atomically, so
 * parallel attempts cannot get past a limit.
 */
import { randomUUID } from 'node:crypto'
import { AppError } from '../../core/errors.js'
import type { AttemptLog, AttemptLogStore } from '../../stores/attempt-logs/contract.js'

export const LOGIN_LOCK = { perAddress: 10, total: 100, perDevice: 10, perSession: 10, windowMs: 15 * 60_000 } as const

/** Which lock: one username from one address, from anywhere, on one device, or in one session (`PUT /me/password`). */
export type LockKind = 'direccion' | 'total' | 'dispositivo' | 'sesion'

/** Encoded code unit by code unit (UTF-16, base64url): no username, known
 * or not, can name another one's log, and any string encodes (a lone
 * surrogate included, which encodeURIComponent refuses). */
function userKey (username: string): string {
  return `login:${Buffer.from(username.toLowerCase(), 'utf16le').toString('base64url')}`
}

/** The set of every log of a username (each address's, device's and session's, and the total), for `desbloquear`. */
const indexOf = (user: string): string => `${user}:logs`

interface KindedLog extends AttemptLog { readonly kind: LockKind }

/** The username's failures from any address: full, it locks the username for every client without a valid device value. */
function totalLog (username: string): KindedLog {
  return { kind: 'total', key: userKey(username), windowMs: LOGIN_LOCK.windowMs, max: LOGIN_LOCK.total }
}

function addressLogs (username: string, ip: string): KindedLog[] {
  return [
    { kind: 'direccion', key: `${userKey(username)}:ip:${ip}`, windowMs: LOGIN_LOCK.windowMs, max: LOGIN_LOCK.perAddress },
    totalLog(username),
  ]
}

function deviceLog (username: string, deviceId: string): KindedLog {
  // The device id is base64url (core/device.ts): it cannot reach into another key.
  return { kind: 'dispositivo', key: `${userKey(username)}:dev:${deviceId}`, windowMs: LOGIN_LOCK.windowMs, max: LOGIN_LOCK.perDevice }
}

function sessionLog (username: string, jti: string): KindedLog {
  return { kind: 'sesion', key: `${userKey(username)}:tok:${Buffer.from(jti).toString('base64url')}`, windowMs: LOGIN_LOCK.windowMs, max: LOGIN_LOCK.perSession }
}

/** An attempt the lock-out let through: the logs it is in, and how full each is now. */
export interface Admitted {
  readonly id: string
  readonly logs: readonly KindedLog[]
  readonly counts: readonly number[]
  /** Judged by its device's log (a valid device value that was not locked). */
  readonly viaDevice: boolean
}

export interface LoginAdmission {
  /** Undefined when refused. */
  readonly admitted?: Admitted
  /** 429 `Demasiadas peticiones` with Retry-After, when refused. */
  readonly refused?: AppError
  /** The locks found full: the device's (then it was treated as absent) and those that refused. */
  readonly locked: readonly LockKind[]
}

const seconds = (ms: number): string => String(Math.max(1, Math.ceil(ms / 1000)))

/** The kinds of the logs that hold `max` attempts. */
const full = (logs: readonly KindedLog[], counts: readonly number[]): LockKind[] =>
  logs.filter((l, i) => (counts[i] ?? 0) >= l.max).map((l) => l.kind)

const refusal = (retryMs: number): AppError => new AppError('DEMASIADAS_PETICIONES', undefined, { 'retry-after': seconds(retryMs) })

/**
 * Logs one attempt of `username` from `ip`, on device `deviceId` when the
 * client presented a valid device value, and says whether it may go on to
 * the password check.
 */
export async function admitLogin (store: AttemptLogStore, username: string, ip: string, deviceId?: string): Promise<LoginAdmission> {
  const id = randomUUID()
  const index = indexOf(userKey(username))
  const locked: LockKind[] = []
  if (deviceId !== undefined) {
    const log = deviceLog(username, deviceId)
    const r = await store.attempt([log], id, index)
    if (r.allowed) return { admitted: { id, logs: [log], counts: r.counts, viaDevice: true }, locked }
    locked.push('dispositivo') // a locked device is treated as absent
  }
  const logs = addressLogs(username, ip)
  const r = await store.attempt(logs, id, index)
  if (r.allowed) return { admitted: { id, logs, counts: r.counts, viaDevice: false }, locked }
  return { refused: refusal(r.retryMs), locked: [...locked, ...full(logs, r.counts)] }
}

/** A current-password check of `PUT /me/password` by session `jti` from `ip`. */
export async function admitPasswordCheck (store: AttemptLogStore, username: string, ip: string, jti: string): Promise<LoginAdmission> {
  const id = randomUUID()
  const logs = [addressLogs(username, ip)[0]!, sessionLog(username, jti)]
  const r = await store.attempt(logs, id, indexOf(userKey(username)))
  if (r.allowed) return { admitted: { id, logs, counts: r.counts, viaDevice: false }, locked: [] }
  return { refused: refusal(r.retryMs), locked: full(logs, r.counts) }
}

/** The locks an admitted attempt filled, once it turned out to be a failure (to log and count them). */
export function engaged (attempt: Admitted): LockKind[] {
  return full(attempt.logs, attempt.counts)
}

/**
 * A login that succeeded: its device's or its address's failures are
 * cleared, and it is taken out of the username's total (it was no failure).
 */
export async function loginSucceeded (store: AttemptLogStore, attempt: Admitted): Promise<void> {
  await Promise.all(attempt.logs.map(async (l) => l.kind === 'total' ? store.forget(l.key, attempt.id) : store.reset(l.key)))
}

/** An attempt that was no failure (a right current password): taken out of every log it is in. */
export async function forgetAttempt (store: AttemptLogStore, attempt: Admitted): Promise<void> {
  await Promise.all(attempt.logs.map(async (l) => store.forget(l.key, attempt.id)))
}

/**
 * Until when the username is locked for every client without a valid
 * device value (the total log full; docs/decisions.md "What bloqueado
 * means"); undefined when it is not. A lock of one address or one device
 * leaves the others free, and is not this.
 */
export async function usernameLockedUntil (store: AttemptLogStore, username: string): Promise<Date | undefined> {
  const { retryMs } = await store.fill(totalLog(username))
  return retryMs > 0 ? new Date(Date.now() + retryMs) : undefined
}

/**
 * Lifts every lock of one username (docs/user-guide.md "Rate limits", `POST
 * /usuarios/{id}/desbloquear`): forgets its total log and every address's,
 * device's and session's log, atomically. Returns how many logs held failures.
 */
export async function unlockLogin (store: AttemptLogStore, username: string): Promise<number> {
  const user = userKey(username)
  return store.clear(indexOf(user), [user])
}
