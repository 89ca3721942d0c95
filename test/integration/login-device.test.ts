/**
 * The lock-out cannot be turned against an account (docs/user-guide.md "Rate limits", OWASP's
 * device cookie), through HTTP on two instances sharing the database and
 * the stores (Redis when REDIS_URL is set): 100 failures for `admin` from
 * 10 addresses lock it for every client without a device value, but the
 * owner logs in with the `dispositivo` an earlier login gave; a tampered,
 * another user's, an expired or a pre-password-change value counts as
 * absent; a device's own failures lock that device; desbloquear lifts every
 * lock; lock-outs are logged (the username only when the user exists) and
 * counted in the metrics.
 */
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import { freePort } from '../helpers/free-port.js'
import { call, type Res } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { createUser } from '../helpers/users.js'
import { DEVICE_MAX_AGE_MS, deviceSigner } from '../../core/device.js'
import { usersTable } from '../../records/users/users-table.js'


let h: Harness
let a: FastifyInstance
let b: FastifyInstance
const ports: number[] = []
const lines: string[] = []
const capture = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
let adminToken: string

beforeAll(async () => {
  h = await createHarness()
  ports.push(await freePort(), await freePort())
  a = await h.app({ env: { METRICS_PORT: String(ports[0]), LOG_LEVEL: 'info' }, logStream: capture })
  b = await h.app({ env: { METRICS_PORT: String(ports[1]) } })
  adminToken = (await tryLogin(a, ADMIN.username, ADMIN.password, '10.50.0.1')).body.data.token
})
afterAll(async () => { await h?.close() })

let ipSeq = 0
const newIp = (): string => { ipSeq++; return `10.51.${Math.floor(ipSeq / 250)}.${(ipSeq % 250) + 1}` }

function tryLogin (app: FastifyInstance, username: string, password: string, ip: string, dispositivo?: string): Promise<Res> {
  const body = { username, password, ...(dispositivo !== undefined && { dispositivo }) }
  return app.inject({ method: 'POST', url: '/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) })
    .then((r) => ({ status: r.statusCode, body: r.json(), headers: r.headers }))
}
/** A successful login's device value. */
async function deviceOf (app: FastifyInstance, username: string, password: string, ip: string, dispositivo?: string): Promise<string> {
  const res = await tryLogin(app, username, password, ip, dispositivo)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.dispositivo as string
}
/** `n` failed logins of `username` from `ip`, alternating instances. */
async function fail (username: string, ip: string, n = 10, dispositivo?: string): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push((await tryLogin(i % 2 === 0 ? a : b, username, `wrong-${i}`, ip, dispositivo)).status)
  return out
}
/** 100 failures from 10 addresses. */
async function distributed (username: string): Promise<void> {
  const statuses: number[] = []
  for (let k = 0; k < 10; k++) statuses.push(...await fail(username, newIp()))
  expect(statuses).toEqual(Array(100).fill(401))
}
/** login_lockouts_total{tipo} summed over both instances' metrics listeners. */
async function lockouts (tipo: string): Promise<number> {
  let sum = 0
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    const line = text.split('\n').find((l) => l.startsWith(`login_lockouts_total{tipo="${tipo}"} `))
    sum += line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}
/** Flip one character of the signature, or of the payload. */
const tamper = (value: string, part: 0 | 1): string => {
  const parts = value.split('.')
  const s = parts[part]!
  parts[part] = s.slice(0, 5) + (s[5] === 'A' ? 'B' : 'A') + s.slice(6)
  return parts.join('.')
}
const logged = (): Array<Record<string, unknown>> => lines.join('').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>)

describe('the distributed lock-out and the device value', () => {
  it('100 failures for admin from 10 addresses lock it for clients without a device; the owner logs in with theirs from a new address', async () => {
    const owner = await deviceOf(a, ADMIN.username, ADMIN.password, newIp())
    const other = await createUser(a, adminToken, 'consulta')
    const othersDevice = await deviceOf(b, other.username, PASSWORD, newIp())
    const before = { total: await lockouts('total'), direccion: await lockouts('direccion') }
    await distributed(ADMIN.username)
    // Every address filled its own log, and the hundredth failure the total.
    expect(await lockouts('direccion')).toBe(before.direccion + 10)
    expect(await lockouts('total')).toBe(before.total + 1)

    // A new address without a device value: locked, on both instances, the right password too.
    expectError(await tryLogin(a, ADMIN.username, ADMIN.password, newIp()), 'DEMASIADAS_PETICIONES')
    const locked = await tryLogin(b, ADMIN.username, ADMIN.password, newIp())
    expectError(locked, 'DEMASIADAS_PETICIONES')
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(15 * 60 - 120)

    // The owner, from an address never seen, with the value an earlier login gave.
    const res = await tryLogin(b, ADMIN.username, ADMIN.password, newIp(), owner)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const renewed = res.body.data.dispositivo as string
    expect((await call(a, 'GET', '/me', { token: res.body.data.token })).status).toBe(200)
    // The renewed value names the same device; both work, on either instance.
    expect((await tryLogin(a, ADMIN.username, ADMIN.password, newIp(), renewed)).status).toBe(200)
    // A wrong password with the device is an ordinary 401, not a lock.
    expectError(await tryLogin(a, ADMIN.username, 'not-the-password', newIp(), owner), 'CREDENCIALES_INVALIDAS')

    // Treated as absent, so refused by the lock: tampered (payload or
    // signature), another user's, garbage, expired, forged with another key.
    // Made with the service's own key and the admin's password hash, as
    // only the service could: the same value unexpired is accepted.
    const adminId = (await call(a, 'GET', '/me', { token: res.body.data.token })).body.data._id as string
    const { table, password } = usersTable(a.registry).login
    const [{ hash }] = await h.db.query<{ hash: string }>(`select "${password}" as hash from "${table}" where "_id" = $1`, [adminId]) as [{ hash: string }]
    const user = { id: adminId, username: ADMIN.username }
    const signer = deviceSigner(h.config.jwtSecret)
    const expired = signer.issue(user, hash, undefined, Date.now() - DEVICE_MAX_AGE_MS - 60_000)
    const forged = deviceSigner('another-secret-that-is-long-enough-0123456789').issue(user, hash)
    expect((await tryLogin(b, ADMIN.username, ADMIN.password, newIp(), signer.issue(user, hash, undefined, Date.now() - DEVICE_MAX_AGE_MS + 60_000))).status).toBe(200)
    for (const wrong of [tamper(owner, 0), tamper(owner, 1), othersDevice, 'x', `${owner}.x`, forged, expired]) {
      expectError(await tryLogin(a, ADMIN.username, ADMIN.password, newIp(), wrong), 'DEMASIADAS_PETICIONES')
    }
    // Another user's value does not unlock admin, and still works for that user.
    expect((await tryLogin(b, other.username, PASSWORD, newIp(), othersDevice)).status).toBe(200)
  })

  it('a device value is the user\'s only while their password is the one it was issued under', async () => {
    const u = await createUser(a, adminToken, 'consulta')
    const device = await deviceOf(a, u.username, PASSWORD, newIp())
    const token = (await tryLogin(a, u.username, PASSWORD, newIp(), device)).body.data.token as string
    const NEW_PW = 'otra-clave-muy-larga-456'
    expect((await call(b, 'PUT', '/me/password', { token, body: { password_actual: PASSWORD, password_nueva: NEW_PW } })).status).toBe(200)
    await distributed(u.username)
    expectError(await tryLogin(a, u.username, NEW_PW, newIp(), device), 'DEMASIADAS_PETICIONES')
    // Unlocked by an administrator, a new login gives a value that works again.
    expect((await call(a, 'POST', `/usuarios/${u.id}/desbloquear`, { token: adminToken })).status).toBe(200)
    const fresh = await deviceOf(b, u.username, NEW_PW, newIp())
    await distributed(u.username)
    expect((await tryLogin(a, u.username, NEW_PW, newIp(), fresh)).status).toBe(200)
  })

  it('ten failures from one address lock that address only; the owner\'s device still logs in there', async () => {
    const u = await createUser(a, adminToken, 'consulta')
    const device = await deviceOf(a, u.username, PASSWORD, newIp())
    const attacker = newIp()
    expect(await fail(u.username, attacker)).toEqual(Array(10).fill(401))
    expectError(await tryLogin(a, u.username, PASSWORD, attacker), 'DEMASIADAS_PETICIONES')
    expect((await tryLogin(b, u.username, PASSWORD, newIp())).status).toBe(200)
    expect((await tryLogin(b, u.username, PASSWORD, attacker, device)).status).toBe(200)
  })

  it('a device\'s own failures lock that device: a stolen value gives ten guesses, then it counts as absent', async () => {
    const u = await createUser(a, adminToken, 'consulta')
    const device = await deviceOf(a, u.username, PASSWORD, newIp())
    await distributed(u.username)
    const before = await lockouts('dispositivo')
    // Ten wrong passwords with the device, from many addresses: 401 each.
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push((await tryLogin(i % 2 === 0 ? a : b, u.username, `guess-${i}`, newIp(), device)).status)
    expect(statuses).toEqual(Array(10).fill(401))
    expect(await lockouts('dispositivo')).toBe(before + 1)
    // Now the device is absent: the total lock refuses it, the right password too.
    expectError(await tryLogin(a, u.username, PASSWORD, newIp(), device), 'DEMASIADAS_PETICIONES')
    // desbloquear lifts every lock of the user: the device's and the total.
    expect((await call(b, 'POST', `/usuarios/${u.id}/desbloquear`, { token: adminToken })).status).toBe(200)
    expect((await tryLogin(a, u.username, PASSWORD, newIp(), device)).status).toBe(200)
    expect((await tryLogin(b, u.username, PASSWORD, newIp())).status).toBe(200)
  })

  it('PUT /me/password: the owner changes it during a total lock; a stolen token gets ten wrong tries, from any addresses', async () => {
    const u = await createUser(a, adminToken, 'consulta')
    const device = await deviceOf(a, u.username, PASSWORD, newIp())
    await distributed(u.username)
    const login = await tryLogin(b, u.username, PASSWORD, newIp(), device)
    expect(login.status).toBe(200)
    const token = login.body.data.token as string
    const put = (app: FastifyInstance, actual: string, nueva: string): Promise<Res> => app.inject({
      method: 'PUT', url: '/me/password', remoteAddress: newIp(),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ password_actual: actual, password_nueva: nueva }),
    }).then((r) => ({ status: r.statusCode, body: r.json(), headers: r.headers }))
    const before = await lockouts('sesion')
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push((await put(i % 2 === 0 ? a : b, `guess-${i}-xxxx`, 'otra-clave-muy-larga-456')).status)
    expect(statuses).toEqual(Array(10).fill(401))
    expect(await lockouts('sesion')).toBe(before + 1)
    expectError(await put(a, PASSWORD, 'otra-clave-muy-larga-456'), 'DEMASIADAS_PETICIONES')
    // Another session of the owner (the device again) is not locked by it.
    const second = (await tryLogin(a, u.username, PASSWORD, newIp(), device)).body.data.token as string
    const res = await call(b, 'PUT', '/me/password', { token: second, body: { password_actual: PASSWORD, password_nueva: 'otra-clave-muy-larga-456' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
  })

  it('a success with the device clears its failures', async () => {
    const u = await createUser(a, adminToken, 'consulta')
    const device = await deviceOf(a, u.username, PASSWORD, newIp())
    await distributed(u.username)
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 9; i++) expect((await tryLogin(a, u.username, 'wrong', newIp(), device)).status).toBe(401)
      expect((await tryLogin(b, u.username, PASSWORD, newIp(), device)).status).toBe(200)
    }
  })
})

describe('lock-outs in the log', () => {
  it('a warn line names the lock, the address, and the username only when the user exists; a failed unknown username is not logged', async () => {
    const u = await createUser(a, adminToken, 'consulta')
    const ip = newIp()
    const mistyped = 'Clave-Tecleada-En-Usuario-6120'
    lines.length = 0
    for (let i = 0; i < 10; i++) expect((await tryLogin(a, u.username, 'wrong', ip)).status).toBe(401)
    for (let i = 0; i < 10; i++) expect((await tryLogin(a, mistyped, 'wrong', ip)).status).toBe(401)
    expectError(await tryLogin(a, mistyped, 'wrong', ip), 'DEMASIADAS_PETICIONES')
    await new Promise((resolve) => setTimeout(resolve, 50))
    const warns = logged().filter((l) => l.msg === 'login locked out')
    expect(warns.map((l) => ({ level: l.level, username: l.username, address: l.address, lock: l.lock }))).toEqual([
      { level: 40, username: u.username, address: ip, lock: 'direccion' },
      { level: 40, username: undefined, address: ip, lock: 'direccion' },
    ])
    const failed = logged().filter((l) => l.msg === 'login failed')
    expect(failed).toHaveLength(20)
    expect(failed.filter((l) => l.username === u.username)).toHaveLength(10)
    expect(lines.join('')).not.toContain(mistyped)
  })
})
