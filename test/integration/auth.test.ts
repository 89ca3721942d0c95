/**
 * Authentication and users (interface "Authentication", docs/user-guide.md "Authentication and roles"): login,
 * tokens, /me, logout and revocation across instances and restarts, roles
 * and `activo` read afresh on every instance, password handling, username
 * rules, the superadmin guard and the bootstrap administrator.
 */
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { MESSAGES } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import { valueColumn } from '../../db/columns.js'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import { call, client, login, type Res, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { usingPostgres } from '../helpers/services.js'
import { gatedPair } from '../helpers/gated.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

const registry = loadRegistry('modules.yaml')
const PASSWORD_COLUMN = valueColumn(registry.usersModule.fieldMap.get('password')!)
const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
const USR_ID = /^USR-\d{4}-\d{5,}$/
const SEVEN_DAYS = 7 * 24 * 3600

let h: Harness, appA: FastifyInstance, appB: FastifyInstance, adminToken: string, adminA: Api

beforeAll(async () => {
  ({ h, app: appA, token: adminToken, admin: adminA } = await startTestApp())
  appB = await h.app()
})
afterAll(async () => { await h.close() })

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')
const decode = (token: string, part: 0 | 1): Record<string, any> => JSON.parse(Buffer.from(token.split('.')[part]!, 'base64url').toString('utf8'))
/** A token signed with the service's own secret (to test expiry and tampering). */
function forge (header: object, payload: object, secret = h.config.jwtSecret): string {
  const unsigned = `${b64(header)}.${b64(payload)}`
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`
}
const status = async (res: Promise<Res>): Promise<number> => (await res).status
const tryLogin = (app: FastifyInstance, username: string, password = PASSWORD): Promise<Res> => call(app, 'POST', '/auth/login', { body: { username, password } })
let n = 0
const uname = (tag: string): string => `auth${++n}.${tag}`
const denuncia = { denunciante_nombre: 'Ana Pérez', tipo: 'hurto', fecha_hechos: '2026-03-01 10:00:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Sustracción de cartera' }

describe('login, tokens, /me and logout', () => {
  it('login returns the token, the user and a device value; the JWT carries sub, jti, iat, exp = iat + 7 days', async () => {
    const res = await tryLogin(appA, ADMIN.username, ADMIN.password)
    expect([res.status, res.body.success]).toEqual([200, true])
    const { token, user } = res.body.data
    expect(Object.keys(res.body.data).sort()).toEqual(['dispositivo', 'token', 'user'])
    // Opaque and signed (docs/user-guide.md "Accounts and sessions"): two base64url parts.
    expect(res.body.data.dispositivo).toMatch(/^[\w-]+\.[\w-]{43}$/)
    expect(user).toEqual({ id: expect.stringMatching(USR_ID), username: ADMIN.username, nombre: expect.any(String), rol: 'superadmin' })
    expect(decode(token, 0)).toMatchObject({ alg: 'HS256' })
    const claims = decode(token, 1)
    expect(claims.sub).toBe(user.id)
    expect(claims.jti).toMatch(/^\S+$/)
    expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60)
    expect(claims.exp).toBe(claims.iat + SEVEN_DAYS)
    expect(decode(await login(appA), 1).jti).not.toBe(claims.jti)
  })

  it('wrong password and unknown user give the same 401', async () => {
    expectError(await tryLogin(appA, ADMIN.username, 'no-es-la-buena'), 'CREDENCIALES_INVALIDAS')
    expectError(await tryLogin(appA, 'nadie.existe', 'no-es-la-buena'), 'CREDENCIALES_INVALIDAS')
  })

  it('/me returns _id, username, nombre, rol, email, _created, personal_id and what of the read log and personal data the role may see', async () => {
    const u = await newUser(appA, adminToken, 'oficial', { email: 'oficial@policia.example' })
    const res = await client(appB, u.token).get('/me')
    const _created = (await adminA.get(`/usuarios/${u.id}`)).body.data._created as string
    expect(_created).toMatch(DATETIME)
    expect(res.body).toEqual({ success: true, data: { _id: u.id, username: u.username, nombre: 'Usuario oficial', rol: 'oficial', email: 'oficial@policia.example', _created, personal_id: null, lecturas: false, proteccion_datos: false } })
  })

  it('missing, malformed, tampered, alg-none and expired tokens are refused', async () => {
    expectError(await call(appA, 'GET', '/me'), 'TOKEN_NO_PROPORCIONADO')
    expectError(await client(appA, 'no.es.un-token').get('/me'), 'TOKEN_INVALIDO')
    const u = await newUser(appA, adminToken, 'agente')
    const claims = decode(u.token, 1)
    const [head, , sig] = u.token.split('.')
    expectError(await client(appA, `${head}.${b64({ ...claims, sub: decode(adminToken, 1).sub })}.${sig}`).get('/me'), 'TOKEN_INVALIDO')
    expectError(await client(appA, `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`).get('/me'), 'TOKEN_INVALIDO')
    expectError(await client(appA, forge({ alg: 'HS256', typ: 'JWT' }, claims, 'otro-secreto-de-al-menos-treinta-y-dos-caracteres')).get('/me'), 'TOKEN_INVALIDO')
    expect(await status(client(appA, forge({ alg: 'HS256', typ: 'JWT' }, claims)).get('/me'))).toBe(200) // the forger itself is sound
    const now = Math.floor(Date.now() / 1000)
    expectError(await client(appA, forge({ alg: 'HS256', typ: 'JWT' }, { ...claims, iat: now - SEVEN_DAYS - 60, exp: now - 60 })).get('/me'), 'TOKEN_INVALIDO')
  })

  it('logout revokes the token on every instance and records it in sys_sesiones', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const other = await login(appB, u.username, PASSWORD)
    expect(await status(client(appB, u.token).get('/me'))).toBe(200)
    expect((await client(appA, u.token).post('/auth/logout')).body).toEqual({ success: true, data: { message: MESSAGES.SESION_CERRADA } })
    expectError(await client(appA, u.token).get('/me'), 'TOKEN_INVALIDO')
    expectError(await client(appB, u.token).get('/me'), 'TOKEN_INVALIDO')
    expectError(await client(appB, u.token).post('/auth/logout'), 'TOKEN_INVALIDO')
    expect(await status(client(appB, other).get('/me'))).toBe(200)
    const rows = await h.db.query<{ jti: string, usuario: string, revocado: Date | null, emitido: Date, expira: Date }>('select * from sys_sesiones where usuario = $1', [u.id])
    const byJti = new Map(rows.map((r) => [r.jti, r]))
    expect(byJti.get(decode(u.token, 1).jti)).toMatchObject({ usuario: u.id, revocado: expect.any(Date) })
    expect(byJti.get(decode(other, 1).jti)).toMatchObject({ usuario: u.id, revocado: null })
    for (const r of rows) expect(r.expira.getTime() - r.emitido.getTime()).toBe(SEVEN_DAYS * 1000)
  })

  it('a token reusing a live jti with another sub is refused, from the cache and from the database', async () => {
    const victim = await newUser(appA, adminToken, 'agente')
    const other = await newUser(appA, adminToken, 'jefe') // a real, active user: the forged sub
    const { jti, iat, exp } = decode(victim.token, 1)
    const forged = forge({ alg: 'HS256', typ: 'JWT' }, { sub: other.id, jti, iat, exp })
    for (const app of [appA, appB]) {
      expect(await status(client(app, victim.token).get('/me'))).toBe(200) // session and user cached
      expect(await status(client(app, other.token).get('/me'))).toBe(200)
      expectError(await client(app, forged).get('/me'), 'TOKEN_INVALIDO')
      expectError(await client(app, forged).get('/usuarios'), 'TOKEN_INVALIDO')
    }
    // A cold cache: the database answers, and caches the session with its true user.
    await h.flushStores()
    const cold = await h.app()
    try {
      expectError(await client(cold, forged).get('/me'), 'TOKEN_INVALIDO')
      expect((await client(cold, victim.token).get('/me')).body.data._id).toBe(victim.id)
      expectError(await client(cold, forged).get('/me'), 'TOKEN_INVALIDO')
    } finally { await h.closeApp(cold) }
  })
})

describe('role and activo are read afresh on every instance', () => {
  it('a role change on A applies to the existing token on B at the next request', async () => {
    const u = await newUser(appA, adminToken, 'jefe')
    const onB = client(appB, u.token)
    expect(await status(onB.post('/vehiculos', { matricula: `${n}-JEF`, tipo: 'patrulla' }))).toBe(201)
    expect(await status(onB.get('/usuarios'))).toBe(200)
    expect(await status(adminA.put(`/usuarios/${u.id}`, { rol: 'consulta' }))).toBe(200)
    expectError(await onB.post('/vehiculos', { matricula: `${n}-CON`, tipo: 'patrulla' }), 'SIN_PERMISOS')
    expectError(await onB.get('/usuarios'), 'SIN_PERMISOS')
    expect(await status(onB.get('/vehiculos'))).toBe(200)
    expect((await onB.get('/me')).body.data.rol).toBe('consulta')
    expect(await status(adminA.put(`/usuarios/${u.id}`, { rol: 'jefe' }))).toBe(200)
    expect(await status(onB.post('/vehiculos', { matricula: `${n}-JF2`, tipo: 'patrulla' }))).toBe(201)
  })

  it('an agente who may POST /denuncias gets 403 once made consulta', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const onB = client(appB, u.token)
    expect(await status(onB.post('/denuncias', denuncia))).toBe(201)
    expect(await status(adminA.put(`/usuarios/${u.id}`, { rol: 'consulta' }))).toBe(200)
    expectError(await onB.post('/denuncias', denuncia), 'SIN_PERMISOS')
  })

  it('activo:false locks out the token and the login; re-activation restores login', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const onB = client(appB, u.token)
    expect(await status(onB.get('/me'))).toBe(200)
    expect(await status(adminA.put(`/usuarios/${u.id}`, { activo: false }))).toBe(200)
    expectError(await onB.get('/me'), 'TOKEN_INVALIDO')
    expectError(await onB.get('/denuncias'), 'TOKEN_INVALIDO')
    expectError(await tryLogin(appB, u.username), 'CREDENCIALES_INVALIDAS')
    expect(await status(adminA.put(`/usuarios/${u.id}`, { activo: true }))).toBe(200)
    expect(await status(client(appA, await login(appB, u.username, PASSWORD)).get('/me'))).toBe(200)
  })

  it('a soft-deleted user\'s token gets 401 and the user can no longer log in', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    expect(await status(client(appB, u.token).get('/me'))).toBe(200)
    expect(await status(adminA.del(`/usuarios/${u.id}`))).toBe(200)
    expectError(await client(appB, u.token).get('/me'), 'TOKEN_INVALIDO')
    expectError(await tryLogin(appB, u.username), 'CREDENCIALES_INVALIDAS')
  })
})

describe('passwords', () => {
  const noSecret = (body: unknown, plain: string): void => {
    const text = JSON.stringify(body)
    expect(text).not.toContain(plain)
    expect(text).not.toContain('$argon2')
    expect(text).not.toMatch(/"password/)
  }

  it('is never returned by /usuarios and is stored only as an Argon2id hash', async () => {
    const plain = 'clave-secreta-inicial-1'
    const created = await adminA.post('/usuarios', { username: uname('pw'), password: plain, nombre: 'Con Clave', rol: 'agente' })
    const id = created.body.data._id as string
    noSecret(created.body, plain)
    noSecret((await adminA.get(`/usuarios/${id}`)).body, plain)
    noSecret((await adminA.put(`/usuarios/${id}`, { nombre: 'Con Clave Cambiada' })).body, plain)
    const changed = 'clave-secreta-cambiada-2'
    noSecret((await adminA.put(`/usuarios/${id}`, { password: changed })).body, changed)
    noSecret((await adminA.get(`/usuarios?_id=${id}`)).body, changed)
    noSecret((await adminA.get('/usuarios?limit=1000')).body, ADMIN.password)
    const all = await h.db.query<Record<string, unknown>>('select * from usuarios')
    expect(all.map((r) => r._id)).toContain(id)
    for (const r of all) expect(String(r[PASSWORD_COLUMN])).toMatch(/^\$argon2id\$/)
    for (const secret of [plain, changed, ADMIN.password, PASSWORD]) expect(JSON.stringify(all)).not.toContain(secret)
  })

  it('after PUT {password} the new password logs in and the old one does not', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    expect(await status(adminA.put(`/usuarios/${u.id}`, { password: 'otra-clave-nueva-99' }))).toBe(200)
    expect(await status(tryLogin(appB, u.username, 'otra-clave-nueva-99'))).toBe(200)
    expectError(await tryLogin(appB, u.username), 'CREDENCIALES_INVALIDAS')
  })

  it('a password shorter than 10 characters is 400', async () => {
    expectError(await adminA.post('/usuarios', { username: uname('short'), password: '123456789', nombre: 'Corta', rol: 'agente' }), 'DATOS_INVALIDOS')
    const u = await newUser(appA, adminToken, 'agente')
    expectError(await adminA.put(`/usuarios/${u.id}`, { password: 'corta' }), 'DATOS_INVALIDOS')
    expect(await status(tryLogin(appA, u.username))).toBe(200)
  })
})

describe('usernames and the superadmin guard', () => {
  const body = (username: string): Record<string, unknown> => ({ username, password: PASSWORD, nombre: 'Usuario', rol: 'consulta' })

  it('accepts 3–64 characters of [a-z0-9._-] and rejects anything else with 400', async () => {
    for (const ok of [`ok.${n}_a-b`, `${++n}ab`.padEnd(3, 'x'), `m${++n}`.padEnd(64, 'z')]) {
      const res = await adminA.post('/usuarios', body(ok))
      expect(res.status, `${ok}: ${JSON.stringify(res.body)}`).toBe(201)
      expect(res.body.data.username).toBe(ok)
    }
    for (const bad of ['ab', 'x'.repeat(65), 'Mayusculas', 'con espacio', 'ñandu.user', 'barra/user', 'arroba@user', '']) {
      expectError(await adminA.post('/usuarios', body(bad)), 'DATOS_INVALIDOS')
    }
    const u = await newUser(appA, adminToken, 'agente')
    expectError(await adminA.put(`/usuarios/${u.id}`, { username: 'NoValido' }), 'DATOS_INVALIDOS')
  })

  it('is unique: 409 Registro duplicado on create and on update', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    expectError(await adminA.post('/usuarios', body(u.username)), 'REGISTRO_DUPLICADO')
    expectError(await adminA.post('/usuarios', body(ADMIN.username)), 'REGISTRO_DUPLICADO')
    const v = await newUser(appA, adminToken, 'agente')
    expectError(await adminA.put(`/usuarios/${v.id}`, { username: u.username }), 'REGISTRO_DUPLICADO')
    expect(await h.db.query('select "_id" from usuarios where username = $1', [u.username])).toHaveLength(1)
  })

  it('an administrador gets 403 on a superadmin but manages an agente', async () => {
    const adm = client(appB, (await newUser(appA, adminToken, 'administrador')).token)
    const superId = decode(adminToken, 1).sub as string
    const before = (await adminA.get(`/usuarios/${superId}`)).body.data
    expectError(await adm.post('/usuarios', { username: uname('super'), password: PASSWORD, nombre: 'Otro Super', rol: 'superadmin' }), 'SIN_PERMISOS')
    expectError(await adm.put(`/usuarios/${superId}`, { nombre: 'Cambiado' }), 'SIN_PERMISOS')
    expectError(await adm.put(`/usuarios/${superId}`, { rol: 'consulta' }), 'SIN_PERMISOS')
    expectError(await adm.del(`/usuarios/${superId}`), 'SIN_PERMISOS')
    expect((await adminA.get(`/usuarios/${superId}`)).body.data).toEqual(before)

    const managed = await adm.post('/usuarios', { username: uname('managed'), password: PASSWORD, nombre: 'Gestionado', rol: 'agente' })
    expect(managed.status, JSON.stringify(managed.body)).toBe(201)
    const id = managed.body.data._id as string
    expect(await status(adm.put(`/usuarios/${id}`, { nombre: 'Gestionado Editado', rol: 'oficial' }))).toBe(200)
    expectError(await adm.put(`/usuarios/${id}`, { rol: 'superadmin' }), 'SIN_PERMISOS')
    expect((await adm.get(`/usuarios/${id}`)).body.data.rol).toBe('oficial')
    expect(await status(adm.del(`/usuarios/${id}`))).toBe(200)
    expect(await status(adminA.post('/usuarios', { username: uname('super'), password: PASSWORD, nombre: 'Super Dos', rol: 'superadmin' }))).toBe(201)
  })
})

describe('bootstrap administrator', () => {
  it('is created once from ADMIN_USERNAME/ADMIN_PASSWORD as superadmin by SISTEMA', async () => {
    const third = await h.app()
    const rows = await h.db.query<{ _id: string, rol: string, _created_by: string }>('select "_id", rol, "_created_by" from usuarios where username = $1', [ADMIN.username])
    expect(rows).toEqual([{ _id: decode(adminToken, 1).sub, rol: 'superadmin', _created_by: 'SISTEMA' }])
    expect(await status(call(third, 'POST', '/auth/login', { body: ADMIN }))).toBe(200)
  })

  it('two instances starting together on an empty database create a single one', async () => {
    const h2 = await createHarness()
    try {
      // Embedded PGlite serves a single process, so there the instances start one after the other.
      if (usingPostgres) await Promise.all([h2.app(), h2.app()])
      else { await h2.app(); await h2.app() }
      const rows = await h2.db.query<{ rol: string }>('select rol from usuarios where "_deleted" is null')
      expect(rows).toEqual([{ rol: 'superadmin' }])
    } finally { await h2.close() }
  })
})

describe('caches across instances, restarts and races', () => {
  // B reads the database, then A changes the user or revokes the token, then B's cache write lands.
  it('a role change is not undone by a stale snapshot cached by another instance', async () => {
    const pair = await gatedPair(h)
    try {
      const admin = client(pair.a, adminToken)
      const u = await newUser(appA, adminToken, 'jefe')
      expect(await status(admin.put(`/usuarios/${u.id}`, { nombre: 'Sin caché' }))).toBe(200)
      const hold = pair.hold(/^fill$/)
      const inFlight = client(pair.b, u.token).get('/usuarios?limit=1')
      await hold.reached
      expect(await status(admin.put(`/usuarios/${u.id}`, { rol: 'consulta' }))).toBe(200)
      hold.release()
      expect(await status(inFlight)).toBe(200) // it began before the change
      expectError(await client(pair.b, u.token).get('/usuarios?limit=1'), 'SIN_PERMISOS')
      expectError(await client(pair.a, u.token).get('/usuarios?limit=1'), 'SIN_PERMISOS')
    } finally { await pair.close() }
  })

  it('a logout is not undone by a stale "active" cached by another instance after a Redis restart', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    await h.flushStores()
    const pair = await gatedPair(h)
    try {
      const hold = pair.hold(/^fill$/)
      const inFlight = client(pair.b, u.token).get('/me')
      await hold.reached
      expect(await status(client(pair.a, u.token).post('/auth/logout'))).toBe(200)
      hold.release()
      await inFlight
      expectError(await client(pair.b, u.token).get('/me'), 'TOKEN_INVALIDO')
      expectError(await client(pair.a, u.token).get('/me'), 'TOKEN_INVALIDO')
    } finally { await pair.close() }
  })

  it('after a restart of the service and of Redis a revoked token stays revoked and a live one works', async () => {
    const u = await newUser(appA, adminToken, 'agente')
    const live = await login(appA, u.username, PASSWORD)
    const revoked = await login(appA, u.username, PASSWORD)
    expect(await status(client(appA, revoked).post('/auth/logout'))).toBe(200)
    await appA.close()
    await h.flushStores()
    const appC = await h.app()
    for (let i = 0; i < 2; i++) expectError(await client(appC, revoked).get('/me'), 'TOKEN_INVALIDO') // the cache filled by the first stays right
    expect((await client(appC, live).get('/me')).body.data._id).toBe(u.id)
    expect(await status(client(appC, live).get('/vehiculos'))).toBe(200)
  })
})
