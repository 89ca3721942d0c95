/**
 * The device value of a login (docs/user-guide.md "Rate limits", OWASP's device cookie): an opaque,
 * signed value a client gets at each successful login and presents at the
 * next one, so that failures from other clients never lock it out
 * (records/auth/lockout.ts). It names a random device id, the user (id and
 * username) and when it was issued, and is valid for DEVICE_MAX_AGE_MS and
 * only while the user's password is the one it was issued under (a
 * password change voids every value given out before).
 *
 *   value = base64url(JSON {v, d, u, n, t, p}) "." base64url(HMAC-SHA-256)
 *
 * It is read in two steps: before the lock-out, by its signature, expiry
 * and username alone (no database query for a locked attempt); after the
 * user's row is read, against its id and password.
 *
 * The key is derived from JWT_SECRET with HKDF under a label of its own, so
 * every instance with the same configuration reads every other's values;
 * a new JWT_SECRET voids them all (they are then treated as absent).
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'

/** How long a device value is valid after it was issued (renewed by each login that presents it). */
export const DEVICE_MAX_AGE_MS = 180 * 24 * 3600 * 1000

/** Longest value accepted in a login body (a real one is about 200 characters). */
export const DEVICE_MAX_LENGTH = 512

export interface Device {
  /** Random id of the client (base64url of 16 bytes). */
  readonly id: string
  readonly userId: string
  readonly username: string
  /** Milliseconds since the epoch. */
  readonly issuedAt: number
  /** Fingerprint of the password hash it was issued under. */
  readonly passwordTag: string
}

export interface DeviceSigner {
  /** A value naming the user on device `deviceId` (a new random one when absent), issued now. */
  issue (user: { id: string, username: string }, passwordHash: string, deviceId?: string, now?: number): string
  /**
   * The device a value names, when it is well formed, signed by this
   * service, unexpired and issued for `username`; undefined otherwise
   * (never an error).
   */
  read (value: unknown, username: string, now?: number): Device | undefined
  /** Whether a device read is this user's, under the password they have now. */
  holds (device: Device, userId: string, passwordHash: string): boolean
}

interface Payload { v: number, d: string, u: string, n: string, t: number, p: string }

export function deviceSigner (jwtSecret: string): DeviceSigner {
  const key = Buffer.from(hkdfSync('sha256', jwtSecret, Buffer.alloc(0), 'policia/dispositivo/v1', 32))
  const mac = (text: string): Buffer => createHmac('sha256', key).update(text).digest()
  // A short fingerprint of the stored password hash: not the hash, and
  // useless without the key.
  const passwordTag = (hash: string): string => mac(`password\0${hash}`).subarray(0, 12).toString('base64url')
  return {
    issue (user, passwordHash, deviceId, now = Date.now()) {
      const payload: Payload = { v: 1, d: deviceId ?? randomBytes(16).toString('base64url'), u: user.id, n: user.username, t: now, p: passwordTag(passwordHash) }
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
      return `${body}.${mac(body).toString('base64url')}`
    },
    read (value, username, now = Date.now()) {
      if (typeof value !== 'string' || value.length > DEVICE_MAX_LENGTH) return undefined
      const [body, sig, ...rest] = value.split('.')
      if (body === undefined || sig === undefined || rest.length > 0) return undefined
      const given = Buffer.from(sig, 'base64url')
      const expected = mac(body)
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
      let p: Partial<Payload>
      try { p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Payload> } catch { return undefined }
      if (p.v !== 1 || typeof p.d !== 'string' || typeof p.u !== 'string' || typeof p.t !== 'number' || typeof p.p !== 'string') return undefined
      if (p.n !== username) return undefined
      // A minute ahead is allowed: instances' clocks may differ a little.
      if (p.t > now + 60_000 || now - p.t > DEVICE_MAX_AGE_MS) return undefined
      return { id: p.d, userId: p.u, username: p.n, issuedAt: p.t, passwordTag: p.p }
    },
    holds (device, userId, passwordHash) {
      return device.userId === userId && device.passwordTag === passwordTag(passwordHash)
    },
  }
}
