/**
 * The device value kept by a browser (docs/user-guide.md "Accounts and
 * sessions"; docs/decisions.md "The console keeps the device value in an
 * HttpOnly cookie"), through HTTP: a login with `recordar_dispositivo`
 * sets it as an HttpOnly, SameSite=Strict cookie on /auth/login named for
 * the username (none without it); a later login whose body has no
 * `dispositivo` takes that cookie, so the owner passes a lock-out of their
 * address that refuses clients without one; another username's cookie or a
 * tampered one is ignored.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import { expectError } from '../helpers/errors.js'
import { type Res } from '../helpers/http.js'
import { createUser } from '../helpers/users.js'
import { DEVICE_MAX_AGE_MS } from '../../core/device.js'

let h: Harness, app: FastifyInstance, adminToken: string

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  adminToken = (await tryLogin(ADMIN.username, ADMIN.password, '10.60.0.1')).body.data.token as string
})
afterAll(async () => { await h?.close() })

function tryLogin (username: string, password: string, ip: string, extra: { cookie?: string, recordar?: boolean } = {}): Promise<Res> {
  const body = { username, password, ...(extra.recordar !== undefined && { recordar_dispositivo: extra.recordar }) }
  return app.inject({
    method: 'POST', url: '/auth/login', remoteAddress: ip, payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(extra.cookie !== undefined && { cookie: extra.cookie }) },
  }).then((r) => ({ status: r.statusCode, body: r.json(), headers: r.headers }))
}

it('sets the cookie only when asked, HttpOnly, SameSite=Strict, on /auth/login, named for the username', async () => {
  const user = await createUser(app, adminToken, 'agente')
  const plain = await tryLogin(user.username, PASSWORD, '10.60.0.2')
  expect(plain.status).toBe(200)
  expect(plain.headers['set-cookie']).toBeUndefined()

  const res = await tryLogin(user.username, PASSWORD, '10.60.0.2', { recordar: true })
  expect(res.status).toBe(200)
  const name = `policia_dispositivo_${Buffer.from(user.username).toString('base64url')}`
  expect(res.headers['set-cookie']).toBe(`${name}=${res.body.data.dispositivo as string}; Path=/auth/login; Max-Age=${DEVICE_MAX_AGE_MS / 1000}; HttpOnly; SameSite=Strict`)
  // A refused login sets nothing.
  const refused = await tryLogin(user.username, 'not-the-password', '10.60.0.2', { recordar: true })
  expect(refused.status).toBe(401)
  expect(refused.headers['set-cookie']).toBeUndefined()
  // Not a boolean: the usual 400.
  expectError(await tryLogin(user.username, PASSWORD, '10.60.0.2', { recordar: 'si' as unknown as boolean }), 'DATOS_INVALIDOS')
})

it('a later login presents the cookie instead of a body value: the owner passes the lock of their address, others do not', async () => {
  const owner = await createUser(app, adminToken, 'oficial')
  const other = await createUser(app, adminToken, 'oficial')
  const ip = '10.60.1.1'
  const first = await tryLogin(owner.username, PASSWORD, ip, { recordar: true })
  const cookie = (first.headers['set-cookie'] as string).split(';')[0]!
  const otherCookie = ((await tryLogin(other.username, PASSWORD, ip, { recordar: true })).headers['set-cookie'] as string).split(';')[0]!

  // Ten failures of the owner's username from that address, by a client with no device value.
  for (let i = 0; i < 10; i++) expect((await tryLogin(owner.username, `wrong-${i}`, ip)).status).toBe(401)
  expectError(await tryLogin(owner.username, PASSWORD, ip), 'DEMASIADAS_PETICIONES')

  // Another username's cookie is not this username's; a tampered value is ignored.
  expectError(await tryLogin(owner.username, PASSWORD, ip, { cookie: otherCookie }), 'DEMASIADAS_PETICIONES')
  const [name, value] = cookie.split('=') as [string, string]
  const tampered = `${name}=${value.slice(0, 8)}${value[8] === 'A' ? 'B' : 'A'}${value.slice(9)}`
  expectError(await tryLogin(owner.username, PASSWORD, ip, { cookie: tampered }), 'DEMASIADAS_PETICIONES')
  // The owner's browser, with its cookie among others: in, and the cookie renewed.
  const res = await tryLogin(owner.username, PASSWORD, ip, { cookie: `otra=1; ${otherCookie}; ${cookie}`, recordar: true })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(res.headers['set-cookie']).toMatch(new RegExp(`^${name}=`))
})
