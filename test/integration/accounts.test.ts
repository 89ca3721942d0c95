/**
 * Accounts and sessions (docs/user-guide.md "Accounts and sessions"), through HTTP on two instances sharing
 * the database and the stores: a password set by an administrator, a
 * deactivation and a deletion end every session for good; PUT /me/password
 * keeps only the session in use; cerrar-sesiones and desbloquear (every
 * lock, a device's too: test/integration/login-device.test.ts); the
 * documented placeholder passwords, everywhere a password is set.
 */
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { MESSAGES } from '../../core/errors.js'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import { call, client, login, type Res, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'
import { insertSessionIfCurrent } from '../../db/session-entity.js'
import { usersTable } from '../../records/users/users-table.js'

const NEW_PW = 'otra-clave-muy-larga-456'

let h: Harness, appA: FastifyInstance, appB: FastifyInstance, adminToken: string, adminA: Api

beforeAll(async () => {
  ({ h, app: appA, token: adminToken, admin: adminA } = await startTestApp())
  appB = await h.app()
})
afterAll(async () => { await h.close() })

let n = 0
const uname = (tag: string): string => `acc${++n}.${tag}`
const me = async (app: FastifyInstance, token: string): Promise<number> => (await call(app, 'GET', '/me', { token })).status
/** Asks both instances, so each has the session cached before the change under test. */
const warm = async (token: string): Promise<void> => { expect([await me(appA, token), await me(appB, token)]).toEqual([200, 200]) }
const refusedEverywhere = async (token: string): Promise<void> => {
  expectError(await call(appA, 'GET', '/me', { token }), 'TOKEN_INVALIDO')
  expectError(await call(appB, 'GET', '/me', { token }), 'TOKEN_INVALIDO')
}
const tryLogin = (app: FastifyInstance, username: string, password: string, ip = '127.0.0.1'): Promise<Res> =>
  app.inject({ method: 'POST', url: '/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username, password }) })
    .then((r) => ({ status: r.statusCode, body: r.json(), headers: r.headers }))
const revokedRows = async (userId: string): Promise<Array<{ revocado: Date | null }>> =>
  h.db.query('select "revocado" from "sys_sesiones" where "usuario" = $1 order by "emitido"', [userId])

describe('a deactivation, a deletion and a password set by an administrator end every session for good', () => {
  it('reactivating a user never revives an old token; a new login works', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const second = await login(appB, u.username, PASSWORD)
    await warm(u.token); await warm(second)
    expect((await adminA.put(`/usuarios/${u.id}`, { activo: false })).status).toBe(200)
    expect((await adminA.put(`/usuarios/${u.id}`, { activo: true })).status).toBe(200)
    await refusedEverywhere(u.token)
    await refusedEverywhere(second)
    expect((await revokedRows(u.id)).every((r) => r.revocado !== null)).toBe(true)
    const fresh = await login(appB, u.username, PASSWORD)
    await warm(fresh)
  })

  it('restoring a deleted user never revives an old token', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    await warm(u.token)
    expect((await adminA.del(`/usuarios/${u.id}`)).status).toBe(200)
    expect((await adminA.post(`/usuarios/${u.id}/restaurar`)).status).toBe(200)
    await refusedEverywhere(u.token)
    await warm(await login(appA, u.username, PASSWORD))
  })

  it('PUT /usuarios/{id} with a password revokes every session of that user, on every instance', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const other = await newUser(appA, adminToken, 'agente')
    const second = await login(appB, u.username, PASSWORD)
    await warm(u.token); await warm(second); await warm(other.token)
    expect((await adminA.put(`/usuarios/${u.id}`, { password: NEW_PW })).status).toBe(200)
    await refusedEverywhere(u.token)
    await refusedEverywhere(second)
    await warm(other.token)
    expectError(await tryLogin(appA, u.username, PASSWORD), 'CREDENCIALES_INVALIDAS')
    await warm(await login(appB, u.username, NEW_PW))
  })

  it('a role change alone revokes no session', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    await warm(u.token)
    expect((await adminA.put(`/usuarios/${u.id}`, { rol: 'consulta' })).status).toBe(200)
    await warm(u.token)
  })

  it('a login that verified the password before a change adds no session after it (the change wins)', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const users = usersTable(appA.registry)
    const em = appA.orm.em.fork()
    const before = await users.findLive(em, { _id: u.id })
    const oldHash = before![users.column('password')] as string
    expect((await adminA.put(`/usuarios/${u.id}`, { password: NEW_PW })).status).toBe(200)
    const now = new Date()
    const session = { jti: `race-${u.id}`, usuario: u.id, emitido: now, expira: new Date(now.getTime() + 60_000), revocado: null }
    expect(await insertSessionIfCurrent(em, session, users.login, oldHash)).toBe(false)
    expect(await h.db.query('select 1 from "sys_sesiones" where "jti" = $1', [session.jti])).toEqual([])
    const current = (await users.findLive(em, { _id: u.id }))![users.column('password')] as string
    expect(await insertSessionIfCurrent(em, session, users.login, current)).toBe(true)
    expect((await adminA.put(`/usuarios/${u.id}`, { activo: false })).status).toBe(200)
    expect(await insertSessionIfCurrent(em, { ...session, jti: `race2-${u.id}` }, users.login, current)).toBe(false)
  })
})

describe('PUT /me/password', () => {
  it('checks the current password, keeps the session in use and revokes every other one', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const other = await login(appB, u.username, PASSWORD)
    await warm(u.token); await warm(other)
    const res = await call(appB, 'PUT', '/me/password', { token: u.token, body: { password_actual: PASSWORD, password_nueva: NEW_PW } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, data: { message: MESSAGES.CONTRASENA_CAMBIADA } })
    await warm(u.token)
    await refusedEverywhere(other)
    expectError(await tryLogin(appA, u.username, PASSWORD), 'CREDENCIALES_INVALIDAS')
    await warm(await login(appA, u.username, NEW_PW))
    // A version of the user by the user, in the history and the chain.
    const hist = await h.db.query<{ usuario: string, accion: string }>('select "usuario", "accion" from "sys_historial" where "registro" = $1 order by "version" desc limit 1', [u.id])
    expect(hist).toEqual([{ usuario: u.id, accion: 'editar' }])
    expect((await adminA.get(`/usuarios/${u.id}/verificar`)).body.data.valido).toBe(true)
  })

  it('a wrong current password is 401 Credenciales inválidas, counted against the login lock-out of that user and address', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const put = (ip: string, actual: string): Promise<Res> => appA.inject({
      method: 'PUT', url: '/me/password', remoteAddress: ip,
      headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ password_actual: actual, password_nueva: NEW_PW }),
    }).then((r) => ({ status: r.statusCode, body: r.json(), headers: r.headers }))
    for (let i = 0; i < 10; i++) expectError(await put('10.9.0.1', `incorrecta-${i}-xxxx`), 'CREDENCIALES_INVALIDAS')
    expectError(await put('10.9.0.1', PASSWORD), 'DEMASIADAS_PETICIONES')
    expectError(await tryLogin(appB, u.username, PASSWORD, '10.9.0.1'), 'DEMASIADAS_PETICIONES')
    expect((await tryLogin(appB, u.username, PASSWORD, '10.9.0.2')).status).toBe(200)
    await warm(u.token)
  })

  it('leaves neither password in the log, at trace level, right or wrong', async () => {
    const lines: string[] = []
    const traced = await h.app({ env: { LOG_LEVEL: 'trace' }, logStream: new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } }) })
    const u = await newUser(appA, adminToken, 'agente')
    const put = (actual: string, nueva: string): Promise<Res> => call(traced, 'PUT', '/me/password', { token: u.token, body: { password_actual: actual, password_nueva: nueva } })
    expectError(await put('secreto-equivocado-1', 'secreto-nuevo-uno-2'), 'CREDENCIALES_INVALIDAS')
    expect((await put(PASSWORD, 'secreto-nuevo-dos-3')).status).toBe(200)
    expect((await call(traced, 'PUT', '/me/password', { token: u.token, raw: '{"password_actual":"secreto-roto-4", "password_nueva": ', headers: { 'content-type': 'application/json' } })).status).toBe(400)
    const log = lines.join('')
    expect(log).toContain('password changed')
    for (const secret of ['secreto-equivocado-1', 'secreto-nuevo-uno-2', PASSWORD, 'secreto-nuevo-dos-3', 'secreto-roto-4']) expect(log).not.toContain(secret)
  })

  it('answers 400 for missing fields, a short, placeholder or username-equal new password, and unknown keys', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const put = (body: unknown): Promise<Res> => call(appA, 'PUT', '/me/password', { token: u.token, body })
    expectError(await put({ password_actual: PASSWORD }), 'DATOS_REQUERIDOS')
    expect((await put({ password_actual: PASSWORD })).body.detalles).toEqual([{ campo: 'password_nueva', mensaje: 'es obligatorio' }])
    expectError(await put({ password_actual: PASSWORD, password_nueva: 'corta' }), 'DATOS_INVALIDOS')
    for (const bad of ['CHANGE_ME_AT_LEAST_10', 'Password123', u.username.toUpperCase()]) {
      const res = await put({ password_actual: PASSWORD, password_nueva: bad })
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles[0].campo).toBe('password_nueva')
    }
    expectError(await put({ password_actual: PASSWORD, password_nueva: NEW_PW, rol: 'superadmin' }), 'DATOS_INVALIDOS')
    expectError(await call(appA, 'PUT', '/me/password', { body: { password_actual: PASSWORD, password_nueva: NEW_PW } }), 'TOKEN_NO_PROPORCIONADO')
    await warm(u.token)
    expect((await tryLogin(appA, u.username, PASSWORD)).status).toBe(200)
  })
})

describe('POST /usuarios/{id}/cerrar-sesiones', () => {
  it('revokes every session of the user on every instance and says how many', async () => {
    const u = await newUser(appA, adminToken, 'oficial')
    const second = await login(appB, u.username, PASSWORD)
    await warm(u.token); await warm(second)
    const res = await adminA.post(`/usuarios/${u.id}/cerrar-sesiones`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, data: { message: MESSAGES.SESIONES_CERRADAS, sesiones_cerradas: 2 } })
    await refusedEverywhere(u.token)
    await refusedEverywhere(second)
    await warm(await login(appA, u.username, PASSWORD)) // the password still works
  })

  it('needs usuarios.editar (403), answers 404 for a missing or deleted user, and only a superadmin acts on a superadmin', async () => {
    const jefe = await newUser(appA, adminToken, 'jefe')
    const target = await newUser(appA, adminToken, 'agente')
    expectError(await client(appA, jefe.token).post(`/usuarios/${target.id}/cerrar-sesiones`), 'SIN_PERMISOS')
    expectError(await client(appA, jefe.token).post(`/usuarios/${target.id}/desbloquear`), 'SIN_PERMISOS')
    expectError(await adminA.post('/usuarios/USR-2020-99999/cerrar-sesiones'), 'REGISTRO_NO_ENCONTRADO')
    const gone = await newUser(appA, adminToken, 'agente')
    expect((await adminA.del(`/usuarios/${gone.id}`)).status).toBe(200)
    expectError(await adminA.post(`/usuarios/${gone.id}/cerrar-sesiones`), 'REGISTRO_NO_ENCONTRADO')
    expectError(await adminA.post(`/usuarios/${gone.id}/desbloquear`), 'REGISTRO_NO_ENCONTRADO')
    const administrador = await newUser(appA, adminToken, 'administrador')
    const superadmin = await newUser(appA, adminToken, 'superadmin')
    expectError(await client(appB, administrador.token).post(`/usuarios/${superadmin.id}/cerrar-sesiones`), 'SIN_PERMISOS')
    expectError(await client(appB, administrador.token).post(`/usuarios/${superadmin.id}/desbloquear`), 'SIN_PERMISOS')
    await warm(superadmin.token)
    expect((await client(appB, administrador.token).post(`/usuarios/${target.id}/cerrar-sesiones`)).status).toBe(200)
    await refusedEverywhere(target.token)
    expect((await adminA.post(`/usuarios/${superadmin.id}/cerrar-sesiones`)).status).toBe(200)
    await refusedEverywhere(superadmin.token)
    expectError(await call(appA, 'POST', `/usuarios/${target.id}/cerrar-sesiones`), 'TOKEN_NO_PROPORCIONADO')
  })
})

describe('POST /usuarios/{id}/desbloquear', () => {
  it('lifts the lock-out of the username on every address, on every instance', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    for (const ip of ['10.8.0.1', '10.8.0.2']) {
      for (let i = 0; i < 10; i++) expectError(await tryLogin(appA, u.username, `incorrecta-${i}-xxxx`, ip), 'CREDENCIALES_INVALIDAS')
      expectError(await tryLogin(appB, u.username, PASSWORD, ip), 'DEMASIADAS_PETICIONES')
    }
    const res = await client(appB, await login(appB)).post(`/usuarios/${u.id}/desbloquear`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, data: { message: MESSAGES.USUARIO_DESBLOQUEADO } })
    expect((await tryLogin(appA, u.username, PASSWORD, '10.8.0.1')).status).toBe(200)
    expect((await tryLogin(appB, u.username, PASSWORD, '10.8.0.2')).status).toBe(200)
    // The failures are forgotten, not only the lock: nine more do not lock again.
    for (let i = 0; i < 9; i++) expectError(await tryLogin(appA, u.username, `incorrecta-${i}-yyyy`, '10.8.0.1'), 'CREDENCIALES_INVALIDAS')
    expect((await tryLogin(appA, u.username, PASSWORD, '10.8.0.1')).status).toBe(200)
  })

  it('lifts the lock for every client without a device value (100 failures from many addresses)', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    for (let i = 0; i < 100; i++) expectError(await tryLogin(appA, u.username, 'incorrecta-xxxx', `10.7.${Math.floor(i / 9)}.${i % 9 + 1}`), 'CREDENCIALES_INVALIDAS')
    expectError(await tryLogin(appA, u.username, PASSWORD, '10.6.0.1'), 'DEMASIADAS_PETICIONES')
    expect((await adminA.post(`/usuarios/${u.id}/desbloquear`)).status).toBe(200)
    expect((await tryLogin(appB, u.username, PASSWORD, '10.6.0.1')).status).toBe(200)
  })
})

describe('documented placeholder passwords and the username are refused wherever a password is set', () => {
  it('on create and on update through /usuarios: 400 Datos inválidos naming the field', async () => {
    const username = uname('ph')
    for (const password of ['CHANGE_ME_AT_LEAST_10', 'contraseña123', '1234567890', `  ${username.toUpperCase()}  `]) {
      const res = await adminA.post('/usuarios', { username, password, nombre: 'X', rol: 'agente' })
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles).toEqual([{ campo: 'password', mensaje: expect.any(String) }])
    }
    const u = await newUser(appA, adminToken, 'agente')
    const res = await adminA.put(`/usuarios/${u.id}`, { password: u.username })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'password', mensaje: 'no puede ser igual al nombre de usuario' }])
    // A new username and a password equal to it, in one update.
    expectError(await adminA.put(`/usuarios/${u.id}`, { username: `${u.username}.x`, password: `${u.username}.x` }), 'DATOS_INVALIDOS')
    await warm(u.token) // nothing was written, nothing revoked
  })

  it('ADMIN_PASSWORD that is a placeholder refuses the start, saying what to do', async () => {
    const h2 = await createHarness()
    try {
      await expect(h2.app({ env: { ADMIN_PASSWORD: 'CHANGE_ME_AT_LEAST_10' } })).rejects.toThrow(/ADMIN_PASSWORD is a placeholder .*Set ADMIN_PASSWORD to a secret of your own/)
      await expect(h2.app({ env: { ADMIN_USERNAME: 'jefatura.central', ADMIN_PASSWORD: 'Jefatura.Central' } })).rejects.toThrow(/ADMIN_PASSWORD equals the username/)
      await expect(h2.app({ env: { ADMIN_PASSWORD: 'corta' } })).rejects.toThrow(/ADMIN_PASSWORD is shorter than 10 characters/)
      expect(await h2.db.query('select 1 from usuarios')).toEqual([])
      await h2.app()
      expect((await call(await h2.app(), 'POST', '/auth/login', { body: ADMIN })).status).toBe(200)
    } finally { await h2.close() }
  })
})
