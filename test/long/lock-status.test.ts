/**
 * A user's login lock-out as its owner sees and lifts it (docs/user-guide.md
 * "Rate limits", docs/decisions.md "What bloqueado means"), through HTTP on
 * two instances sharing the stores: `GET /usuarios/{id}` answers
 * `bloqueado` and `bloqueado_hasta` (the username locked for every client
 * without a device value), not for one address's lock nor in a read with
 * `campos`; an administrador lifts an agente's lock, only a superadmin a
 * superadmin's; other modules' reads carry nothing of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { formatDateTime } from '../../core/time.js'
import { PASSWORD, type Harness } from '../helpers/app.js'
import { client, ok, type Api, type Res } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

let h: Harness, appA: FastifyInstance, appB: FastifyInstance, adminToken: string, adminA: Api

beforeAll(async () => {
  ({ h, app: appA, token: adminToken, admin: adminA } = await startTestApp())
  appB = await h.app()
})
afterAll(async () => { await h.close() })

const tryLogin = (app: FastifyInstance, username: string, password: string, ip: string): Promise<Res> =>
  app.inject({ method: 'POST', url: '/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username, password }) })
    .then((r) => ({ status: r.statusCode, body: r.json(), headers: r.headers }))

/** Failures (100 in all with `earlier`) from 12 addresses: the username locked for every client without a device value. */
async function lockEverywhere (username: string, earlier = 0): Promise<void> {
  for (let i = 0; i < 100 - earlier; i++) expectError(await tryLogin(appA, username, 'incorrecta-xxxx', `10.9.${Math.floor(i / 9)}.${i % 9 + 1}`), 'CREDENCIALES_INVALIDAS')
  expectError(await tryLogin(appB, username, PASSWORD, '10.5.0.1'), 'DEMASIADAS_PETICIONES')
}

const lockOf = async (api: Api, id: string): Promise<unknown> => {
  const data = ok(await api.get(`/usuarios/${id}`))
  return { bloqueado: data.bloqueado, bloqueado_hasta: data.bloqueado_hasta }
}
const FREE = { bloqueado: false, bloqueado_hasta: null }

describe('GET /usuarios/{id}: bloqueado and bloqueado_hasta', () => {
  it('false and null, still after one address is locked; true until the lock ends once 100 failures lock it everywhere', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    expect(await lockOf(adminA, u.id)).toEqual(FREE)
    for (let i = 0; i < 10; i++) expectError(await tryLogin(appA, u.username, `incorrecta-${i}-xxxx`, '10.4.0.1'), 'CREDENCIALES_INVALIDAS')
    expectError(await tryLogin(appA, u.username, PASSWORD, '10.4.0.1'), 'DEMASIADAS_PETICIONES')
    // One address's lock: the user still logs in from any other.
    expect(await lockOf(adminA, u.id)).toEqual(FREE)

    const before = formatDateTime(new Date(), appA.config.timeZone)
    await lockEverywhere(u.username, 10)
    const after = formatDateTime(new Date(Date.now() + 15 * 60_000 + 1000), appA.config.timeZone)
    const api = client(appB, adminToken)
    const lock = await lockOf(api, u.id) as { bloqueado: boolean, bloqueado_hasta: string }
    expect(lock.bloqueado).toBe(true)
    expect(lock.bloqueado_hasta).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    expect(lock.bloqueado_hasta > before && lock.bloqueado_hasta <= after, `${before} < ${lock.bloqueado_hasta} <= ${after}`).toBe(true)
    // A partial read has none of it; a read of another module neither.
    const partial = ok(await api.get(`/usuarios/${u.id}?campos=nombre`))
    expect(partial).not.toHaveProperty('bloqueado')
    const me = ok(await api.get('/me'))
    expect(me).not.toHaveProperty('bloqueado')

    expect((await api.post(`/usuarios/${u.id}/desbloquear`)).status).toBe(200)
    expect(await lockOf(adminA, u.id)).toEqual(FREE)
    expect((await tryLogin(appA, u.username, PASSWORD, '10.5.0.1')).status).toBe(200)
  })

  it('an administrador sees and lifts an agente\'s lock; only a superadmin lifts a superadmin\'s', async () => {
    const administrador = client(appA, (await newUser(appA, adminToken, 'administrador')).token)
    const agente = await newUser(appA, adminToken, 'agente')
    const superadmin = await newUser(appA, adminToken, 'superadmin')
    await lockEverywhere(agente.username)
    await lockEverywhere(superadmin.username)

    expect(await lockOf(administrador, agente.id)).toMatchObject({ bloqueado: true })
    expect((await administrador.post(`/usuarios/${agente.id}/desbloquear`)).status).toBe(200)
    expect(await lockOf(administrador, agente.id)).toEqual(FREE)
    expect((await tryLogin(appB, agente.username, PASSWORD, '10.5.0.2')).status).toBe(200)

    expectError(await administrador.post(`/usuarios/${superadmin.id}/desbloquear`), 'SIN_PERMISOS')
    expect(await lockOf(adminA, superadmin.id)).toMatchObject({ bloqueado: true })
    expectError(await tryLogin(appB, superadmin.username, PASSWORD, '10.5.0.3'), 'DEMASIADAS_PETICIONES')
    expect((await adminA.post(`/usuarios/${superadmin.id}/desbloquear`)).status).toBe(200)
    expect(await lockOf(adminA, superadmin.id)).toEqual(FREE)
    expect((await tryLogin(appB, superadmin.username, PASSWORD, '10.5.0.3')).status).toBe(200)
  })
})
