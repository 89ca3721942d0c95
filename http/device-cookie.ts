/**
 * The console's memory of a device value (docs/decisions.md "The console
 * keeps the device value in an HttpOnly cookie"; docs/user-guide.md
 * "Accounts and sessions"): one cookie per username, set by a login that
 * asks for it (`recordar_dispositivo`), `HttpOnly` (no page script reads
 * it), `SameSite=Strict` and scoped to `/auth/login`, the only request that
 * carries it; read back when a login's body brings no `dispositivo`. It is
 * not a credential: it only decides which lock-out judges the login.
 */

import { parseCookie } from 'cookie'

export const DEVICE_COOKIE_PATH = '/auth/login'
const PREFIX = 'policia_dispositivo_'

/** The cookie's name for a username: base64url keeps every username a valid cookie name. */
export function deviceCookieName (username: string): string {
  return PREFIX + Buffer.from(username.trim().toLowerCase(), 'utf8').toString('base64url')
}

/** The Set-Cookie value; `Secure` whenever the request came over https or from a loopback page (browsers take it there). */
export function deviceCookie (username: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${deviceCookieName(username)}=${value}; Path=${DEVICE_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

/** The value of the username's cookie in a Cookie header (parsed by `cookie`, as Fastify's own tooling does), or undefined. */
export function readDeviceCookie (header: string | undefined, username: string): string | undefined {
  return header === undefined ? undefined : parseCookie(header)[deviceCookieName(username)]
}
