/**
 * Every error row of docs/user-guide.md "Errors" that the records API and login can produce,
 * through HTTP: exact status, exact Spanish text, `detalles` where they name
 * a field, the order of the checks (401 → 404 module → 403 → 400 → 404
 * record → 409), no partial write after a failed create, and an envelope
 * that is exactly `{success: false, error, detalles?}` with no stack or SQL.
 */
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { ErrorCode } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import { PASSWORD, type Harness } from '../helpers/app.js'
import { call, client, login, sampleBody, type Res, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

const registry = loadRegistry('modules.yaml')
const MISSING_DEN = 'DEN-2026-99999'

let h: Harness, app: FastifyInstance, adminToken: string, admin: Api
let adminId: string
const tok: Record<'consulta' | 'agente' | 'administrador', string> = { consulta: '', agente: '', administrador: '' }
let consulta: Api
let agente: Api
let administrador: Api
let denId: string
let deletedPer: string
const refs = new Map<string, string>()

const mod = (name: string) => registry.byName.get(name)!
const body = (name: string): Record<string, unknown> => sampleBody(mod(name), refs)
const rows = async (table: string): Promise<number> => (await h.db.query<{ n: number }>(`select count(*)::int as n from "${table}"`))[0]!.n
const created = async (res: Res): Promise<string> => { expect(res.status, JSON.stringify(res.body)).toBe(201); return res.body.data._id as string }
const seq = (id: string): number => Number(id.split('-').pop())

/** The exact error envelope; `campos` must all be named in `detalles`. */
function fail (res: Res, code: ErrorCode, campos?: string[]): void {
  expectError(res, code)
  const { success, error: e, codigo, detalles, ...rest } = res.body as Record<string, unknown>
  expect(rest).toEqual({})
  expect([success, typeof e, codigo]).toEqual([false, 'string', code])
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/)
  if (detalles !== undefined) {
    expect(Array.isArray(detalles) && detalles.length > 0).toBe(true)
    for (const d of detalles as unknown[]) expect(d).toEqual({ campo: expect.any(String), mensaje: expect.any(String) })
  }
  if (campos !== undefined) expect((detalles as Array<{ campo: string }> | undefined)?.map((d) => d.campo)).toEqual(expect.arrayContaining(campos))
  expect(JSON.stringify(res.body)).not.toMatch(/stack|\bat .+:\d+|\bselect\b|\binsert\b|\bviolates\b|\bconstraint\b|\bErr(or)?:|node_modules|FST_/i)
}

/** POST that must fail: the module's table row count is unchanged. */
async function failedPost (name: string, payload: { body?: unknown, raw?: string, headers?: Record<string, string> }, token = adminToken): Promise<Res> {
  const before = await rows(mod(name).table)
  const res = await call(app, 'POST', `/${mod(name).path}`, { token, ...payload })
  expect(await rows(mod(name).table)).toBe(before)
  return res
}
const JSON_CT = { 'content-type': 'application/json' }

beforeAll(async () => {
  ({ h, app, token: adminToken, admin } = await startTestApp())
  adminId = (await admin.get('/me')).body.data._id
  for (const rol of ['consulta', 'agente', 'administrador'] as const) tok[rol] = (await newUser(app, adminToken, rol)).token
  consulta = client(app, tok.consulta)
  agente = client(app, tok.agente)
  administrador = client(app, tok.administrador)
  refs.set('personal', await created(await admin.post('/personal', body('personal'))))
  denId = await created(await admin.post('/denuncias', body('denuncias')))
  deletedPer = await created(await admin.post('/personal', body('personal')))
  expect((await admin.del(`/personal/${deletedPer}`)).status).toBe(200)
})
afterAll(async () => { await h.close() })

describe('400 Datos requeridos', () => {
  it('a required field missing on create names it in detalles', async () => {
    const { descripcion: _d, ...rest } = body('denuncias')
    const res = await failedPost('denuncias', { body: rest })
    fail(res, 'DATOS_REQUERIDOS', ['descripcion'])
    expect(res.body.detalles).toEqual([{ campo: 'descripcion', mensaje: expect.any(String) }])
  })
  it('POST with no body, or {}', async () => {
    fail(await failedPost('denuncias', {}), 'DATOS_REQUERIDOS')
    fail(await failedPost('denuncias', { body: {} }), 'DATOS_REQUERIDOS', ['denunciante_nombre', 'tipo', 'fecha_hechos', 'lugar_hechos', 'descripcion'])
  })
  it('a required field set to null on create', async () => {
    fail(await failedPost('denuncias', { body: { ...body('denuncias'), descripcion: null } }), 'DATOS_REQUERIDOS', ['descripcion'])
    fail(await failedPost('sanciones', { body: { ...body('sanciones'), tipo: null } }), 'DATOS_REQUERIDOS', ['tipo'])
  })
  it('a required field set to null on PUT', async () => {
    fail(await admin.put(`/denuncias/${denId}`, { descripcion: null }), 'DATOS_REQUERIDOS', ['descripcion'])
  })
  it('PUT with {} or with only `_` keys; nothing is written', async () => {
    const v = (await admin.get(`/denuncias/${denId}`)).body.data._version
    fail(await admin.put(`/denuncias/${denId}`, {}), 'DATOS_REQUERIDOS')
    fail(await admin.put(`/denuncias/${denId}`, { _version: v, _id: 'DEN-2026-00042', _hash: 'x' }), 'DATOS_REQUERIDOS')
    expect((await admin.get(`/denuncias/${denId}`)).body.data._version).toBe(v)
  })
  it('login without password', async () => {
    fail(await client(app).post('/auth/login', { username: 'admin' }), 'DATOS_REQUERIDOS', ['password'])
  })
  it('login with no body at all', async () => {
    fail(await client(app).post('/auth/login'), 'DATOS_REQUERIDOS')
  })
})

describe('400 Datos inválidos', () => {
  const cases: Array<[string, string, () => Record<string, unknown>, string]> = [
    ['string for an integer', 'sanciones', () => ({ puntos_carnet: '3' }), 'puntos_carnet'],
    ['number for a string', 'denuncias', () => ({ lugar_hechos: 5 }), 'lugar_hechos'],
    ['object for a string', 'denuncias', () => ({ lugar_hechos: { calle: 'Mayor' } }), 'lugar_hechos'],
    ['enum value not allowed', 'denuncias', () => ({ prioridad: 'altisima' }), 'prioridad'],
    ['undeclared field', 'denuncias', () => ({ inventado: 'x' }), 'inventado'],
    ['integer above its max', 'sanciones', () => ({ puntos_carnet: 16 }), 'puntos_carnet'],
    ['decimal below its min', 'sanciones', () => ({ importe: -1 }), 'importe'],
    ['decimal with 3 decimals', 'sanciones', () => ({ importe: 1.234 }), 'importe'],
    ['impossible date', 'sanciones', () => ({ fecha_notificacion: '2026-02-30' }), 'fecha_notificacion'],
    ['impossible datetime', 'denuncias', () => ({ fecha_hechos: '2026-02-30 10:00:00' }), 'fecha_hechos'],
    ['datetime in the Madrid DST gap', 'denuncias', () => ({ fecha_hechos: '2026-03-29 02:30:00' }), 'fecha_hechos'],
    ['bad date format', 'sanciones', () => ({ fecha_notificacion: '30/03/2026' }), 'fecha_notificacion'],
    ['bad datetime format', 'denuncias', () => ({ fecha_hechos: '2026-03-15T10:30' }), 'fecha_hechos'],
    ['ref to a missing record', 'denuncias', () => ({ agente_asignado: 'PER-2026-99999' }), 'agente_asignado'],
    ['ref to a soft-deleted record', 'denuncias', () => ({ agente_asignado: deletedPer }), 'agente_asignado'],
    ['ref to another module', 'denuncias', () => ({ agente_asignado: denId }), 'agente_asignado'],
  ]
  it.each(cases)('%s (%s)', async (_label, name, patch, campo) => {
    fail(await failedPost(name, { body: { ...body(name), ...patch() } }), 'DATOS_INVALIDOS', [campo])
  })
  it('an enum value not allowed names the values, no null and no trailing separator, on create and on PUT', async () => {
    // prioridad is optional, so nullable: its schema's enum lists null too.
    const create = await failedPost('denuncias', { body: { ...body('denuncias'), prioridad: 'altisima' } })
    expect(create.body.detalles).toEqual([{ campo: 'prioridad', mensaje: 'debe ser uno de: baja, media, alta, urgente' }])
    const put = await admin.put(`/personal/${refs.get('personal')!}`, { escala: 'general' })
    expect(put.body.detalles).toEqual([{ campo: 'escala', mensaje: 'debe ser uno de: oficial, subinspector, inspector, comisario' }])
  })
  it('an invalid value on PUT writes nothing', async () => {
    const v = (await admin.get(`/denuncias/${denId}`)).body.data._version
    fail(await admin.put(`/denuncias/${denId}`, { prioridad: 'altisima' }), 'DATOS_INVALIDOS', ['prioridad'])
    fail(await admin.put(`/denuncias/${denId}`, { agente_asignado: deletedPer }), 'DATOS_INVALIDOS', ['agente_asignado'])
    expect((await admin.get(`/denuncias/${denId}`)).body.data._version).toBe(v)
  })
  it('a body that is a JSON array', async () => {
    fail(await failedPost('denuncias', { raw: JSON.stringify([body('denuncias')]), headers: JSON_CT }), 'DATOS_INVALIDOS')
  })
  it.each([['__proto__', '{"x":1}'], ['constructor', '{"prototype":{"x":1}}']])('a %s key', async (key, value) => {
    const good = JSON.stringify(body('denuncias')).slice(1)
    fail(await failedPost('denuncias', { raw: `{"${key}":${value},${good}`, headers: JSON_CT }), 'DATOS_INVALIDOS')
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })
  it('a bad `_version` type or a bad If-Match on PUT and DELETE', async () => {
    fail(await admin.put(`/denuncias/${denId}`, { lugar_hechos: 'Plaza', _version: 'uno' }), 'DATOS_INVALIDOS', ['_version'])
    fail(await admin.put(`/denuncias/${denId}`, { lugar_hechos: 'Plaza', _version: 1.5 }), 'DATOS_INVALIDOS', ['_version'])
    fail(await admin.put(`/denuncias/${denId}`, { lugar_hechos: 'Plaza' }, { 'if-match': 'abc' }), 'DATOS_INVALIDOS')
    fail(await admin.del(`/denuncias/${denId}`, { 'if-match': 'abc' }), 'DATOS_INVALIDOS')
    expect((await admin.get(`/denuncias/${denId}`)).status).toBe(200)
  })
})

describe('400 JSON mal formado, 415, 413', () => {
  it('invalid JSON', async () => {
    fail(await failedPost('denuncias', { raw: '{"tipo": "hurto",', headers: JSON_CT }), 'JSON_MAL_FORMADO')
    fail(await call(app, 'PUT', `/denuncias/${denId}`, { token: adminToken, raw: "{'tipo': 1}", headers: JSON_CT }), 'JSON_MAL_FORMADO')
  })
  it('a text/plain body', async () => {
    fail(await failedPost('denuncias', { raw: 'tipo=hurto', headers: { 'content-type': 'text/plain' } }), 'TIPO_CONTENIDO_NO_SOPORTADO')
  })
  it('a body over 1 MiB', async () => {
    const big = { ...body('denuncias'), descripcion: 'x'.repeat(1024 * 1024) }
    fail(await failedPost('denuncias', { body: big }), 'PETICION_DEMASIADO_GRANDE')
  })
})

describe('401', () => {
  const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url')
  const claims = (t: string): Record<string, unknown> => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString())
  const hs256 = (payload: object, secret = h.config.jwtSecret): string => {
    const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`
    return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`
  }
  const now = (): number => Math.floor(Date.now() / 1000)

  it('Token no proporcionado on a module, /me and an unknown path', async () => {
    for (const url of ['/denuncias', `/denuncias/${denId}`, '/me', '/nada', '/denuncias/X/extra']) {
      fail(await client(app).get(url), 'TOKEN_NO_PROPORCIONADO')
    }
    fail(await client(app).post('/denuncias', body('denuncias')), 'TOKEN_NO_PROPORCIONADO')
  })
  it('garbage, wrong scheme, tampered, alg none, foreign secret', async () => {
    const c = claims(adminToken)
    const [head, payload] = adminToken.split('.') as [string, string, string]
    const tokens = [
      'basura',
      `${head}.${payload}.${'A'.repeat(43)}`,
      `${head}.${b64({ ...c, sub: 'USR-2026-99999' })}.${adminToken.split('.')[2]!}`,
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(c)}.`,
      hs256(c, 'otro-secreto-que-tambien-es-largo-0123456789abcdef'),
    ]
    for (const t of tokens) {
      fail(await client(app, t).get('/denuncias'), 'TOKEN_INVALIDO')
      fail(await client(app, t).get('/me'), 'TOKEN_INVALIDO')
    }
    fail(await call(app, 'GET', '/me', { headers: { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` } }), 'TOKEN_INVALIDO')
  })
  it('an expired token (same session, exp in the past)', async () => {
    const c = claims(adminToken)
    expect((await client(app, hs256({ ...c, iat: now() - 60, exp: now() + 600 })).get('/me')).status).toBe(200)
    fail(await client(app, hs256({ ...c, iat: now() - 8 * 86400, exp: now() - 86400 })).get('/me'), 'TOKEN_INVALIDO')
    fail(await client(app, hs256({ ...c, iat: now() - 60, exp: now() - 1 })).get('/denuncias'), 'TOKEN_INVALIDO')
  })
  it('a token verified a moment ago is refused once it expires (verified tokens are cached until their exp only)', async () => {
    const exp = now() + 1
    const api = client(app, hs256({ ...claims(adminToken), iat: now() - 60, exp }))
    expect((await api.get('/me')).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, exp * 1000 + 20 - Date.now()))
    fail(await api.get('/me'), 'TOKEN_INVALIDO')
  })
  it('a token after logout', async () => {
    const t = await login(app)
    expect((await client(app, t).post('/auth/logout')).status).toBe(200)
    fail(await client(app, t).get('/me'), 'TOKEN_INVALIDO')
    fail(await client(app, t).get('/denuncias'), 'TOKEN_INVALIDO')
    fail(await client(app, t).post('/auth/logout'), 'TOKEN_INVALIDO')
  })
  it('Credenciales inválidas, the same answer for a wrong password and an unknown user', async () => {
    const wrong = await client(app).post('/auth/login', { username: 'admin', password: 'no-es-la-contraseña' })
    const unknown = await client(app).post('/auth/login', { username: 'nadie-existe', password: 'no-es-la-contraseña' })
    fail(wrong, 'CREDENCIALES_INVALIDAS')
    expect(unknown).toEqual(expect.objectContaining({ status: wrong.status, body: wrong.body }))
  })
})

describe('403 Sin permisos para esta operación', () => {
  it('consulta cannot POST, PUT or DELETE; agente cannot DELETE denuncias nor PUT vehiculos, and another\'s denuncia does not exist for it', async () => {
    fail(await failedPost('denuncias', { body: body('denuncias') }, tok.consulta), 'SIN_PERMISOS')
    fail(await consulta.put(`/denuncias/${denId}`, { lugar_hechos: 'Plaza' }), 'SIN_PERMISOS')
    fail(await consulta.del(`/denuncias/${denId}`), 'SIN_PERMISOS')
    // No eliminar at all, no vehiculos.editar at all: 403 before the record is looked for.
    fail(await agente.del(`/denuncias/${denId}`), 'SIN_PERMISOS')
    fail(await agente.put('/vehiculos/VEH-2020-99999', { modelo: 'x' }), 'SIN_PERMISOS')
    // denuncias.editar:propios, and the administrator's denuncia is not its own (docs/user-guide.md "Authentication and roles").
    fail(await agente.put(`/denuncias/${denId}`, { lugar_hechos: 'Plaza' }), 'REGISTRO_NO_ENCONTRADO')
    expect((await admin.get(`/denuncias/${denId}`)).body.data._deleted).toBeNull()
  })
  it('only a superadmin creates, edits or deletes a superadmin', async () => {
    let n = 0
    const user = (rol: string) => ({ username: `e${++n}x${process.pid}${rol.slice(0, 3)}`, password: PASSWORD, nombre: `Usuario ${rol}`, rol })
    fail(await failedPost('usuarios', { body: user('superadmin') }, tok.administrador), 'SIN_PERMISOS')
    const sup = await created(await admin.post('/usuarios', user('superadmin')))
    fail(await administrador.put(`/usuarios/${sup}`, { nombre: 'Otro' }), 'SIN_PERMISOS')
    fail(await administrador.del(`/usuarios/${sup}`), 'SIN_PERMISOS')
    fail(await administrador.put(`/usuarios/${adminId}`, { nombre: 'Otro' }), 'SIN_PERMISOS')
    fail(await administrador.del(`/usuarios/${adminId}`), 'SIN_PERMISOS')
    const plain = await created(await administrador.post('/usuarios', user('agente')))
    fail(await administrador.put(`/usuarios/${plain}`, { rol: 'superadmin' }), 'SIN_PERMISOS')
    expect((await admin.get(`/usuarios/${plain}`)).body.data.rol).toBe('agente')
    expect((await admin.get(`/usuarios/${sup}`)).body.data._version).toBe(1)
    expect((await admin.put(`/usuarios/${sup}`, { nombre: 'Cambiado' })).status).toBe(200)
    expect((await admin.del(`/usuarios/${sup}`)).status).toBe(200)
  })
})


describe('404', () => {
  it('Registro no encontrado on GET, PUT and DELETE of an unknown id', async () => {
    for (const id of [MISSING_DEN, 'X']) {
      fail(await admin.get(`/denuncias/${id}`), 'REGISTRO_NO_ENCONTRADO')
      fail(await admin.put(`/denuncias/${id}`, { lugar_hechos: 'Plaza' }), 'REGISTRO_NO_ENCONTRADO')
      fail(await admin.del(`/denuncias/${id}`), 'REGISTRO_NO_ENCONTRADO')
    }
  })
  it('Módulo no encontrado for an unknown first segment', async () => {
    for (const url of ['/nada', '/nada/DEN-2026-00001', '/Denuncias']) fail(await admin.get(url), 'MODULO_NO_ENCONTRADO')
    fail(await admin.post('/nada', { a: 1 }), 'MODULO_NO_ENCONTRADO')
  })
  it('Ruta no encontrada for a wrong tail on a known path', async () => {
    fail(await admin.get(`/denuncias/${denId}/extra`), 'RUTA_NO_ENCONTRADA')
    fail(await admin.get('/auth/nada'), 'RUTA_NO_ENCONTRADA')
  })
})

describe('405', () => {
  it('Método no permitido en esta ruta for a method a known path does not have, with Allow; nothing is written', async () => {
    const v = (await admin.get(`/denuncias/${denId}`)).body.data._version
    const patch = await call(app, 'PATCH', `/denuncias/${denId}`, { token: adminToken, body: { lugar_hechos: 'Plaza' } })
    fail(patch, 'METODO_NO_PERMITIDO')
    expect(patch.headers.allow).toBe('GET, HEAD, PUT, DELETE')
    expect((await admin.get(`/denuncias/${denId}`)).body.data._version).toBe(v)
    const del = await admin.del('/denuncias')
    fail(del, 'METODO_NO_PERMITIDO')
    expect(del.headers.allow).toBe('GET, HEAD, POST')
  })
})

describe('409', () => {
  it('Registro duplicado on a unique field (tip, matricula), POST and PUT', async () => {
    const p1 = { ...body('personal'), tip: `TIP-A-${process.pid}` }
    const id1 = await created(await admin.post('/personal', p1))
    fail(await failedPost('personal', { body: { ...body('personal'), tip: p1.tip } }), 'REGISTRO_DUPLICADO', ['tip'])
    const id2 = await created(await admin.post('/personal', body('personal')))
    fail(await admin.put(`/personal/${id2}`, { tip: p1.tip }), 'REGISTRO_DUPLICADO', ['tip'])
    expect((await admin.put(`/personal/${id1}`, { tip: p1.tip })).status).toBe(200)
    const v = { ...body('vehiculos'), matricula: '1234-BCD' }
    const v1 = await created(await admin.post('/vehiculos', v))
    fail(await failedPost('vehiculos', { body: { ...body('vehiculos'), matricula: '1234-BCD' } }), 'REGISTRO_DUPLICADO', ['matricula'])
    const v2 = await created(await admin.post('/vehiculos', body('vehiculos')))
    fail(await admin.put(`/vehiculos/${v2}`, { matricula: '1234-BCD' }), 'REGISTRO_DUPLICADO', ['matricula'])
    expect((await admin.get(`/vehiculos/${v1}`)).body.data._version).toBe(1)
  })
  it('Registro duplicado on the encrypted nif, normalised trim + upper case', async () => {
    await created(await admin.post('/personal', { ...body('personal'), nif: '11111111H' }))
    fail(await failedPost('personal', { body: { ...body('personal'), nif: ' 11111111h ' } }), 'REGISTRO_DUPLICADO', ['nif'])
    const other = await created(await admin.post('/personal', { ...body('personal'), nif: '22222222J' }))
    fail(await admin.put(`/personal/${other}`, { nif: '11111111h' }), 'REGISTRO_DUPLICADO', ['nif'])
  })
  it('Conflicto de versión with a stale `_version` or If-Match; matching versions succeed', async () => {
    const id = await created(await admin.post('/denuncias', body('denuncias')))
    const put = (b: Record<string, unknown>, headers?: Record<string, string>) => admin.put(`/denuncias/${id}`, { lugar_hechos: 'Plaza', ...b }, headers)
    expect((await put({ _version: 1 })).body.data._version).toBe(2)
    fail(await put({ _version: 1 }), 'CONFLICTO_VERSION')
    fail(await put({}, { 'if-match': '"1"' }), 'CONFLICTO_VERSION')
    expect((await put({}, { 'if-match': '"2"' })).body.data._version).toBe(3)
    fail(await admin.del(`/denuncias/${id}`, { 'if-match': '"1"' }), 'CONFLICTO_VERSION')
    const after = await admin.get(`/denuncias/${id}`)
    expect([after.status, after.body.data._version, after.headers.etag]).toEqual([200, 3, '"3"'])
    expect((await admin.del(`/denuncias/${id}`, { 'if-match': '"3"' })).status).toBe(200)
  })
})

describe('order of checks', () => {
  it('401 before 404 module, 404 module before 403', async () => {
    fail(await client(app).get('/nada'), 'TOKEN_NO_PROPORCIONADO')
    fail(await client(app, 'basura').get('/nada'), 'TOKEN_INVALIDO')
    fail(await consulta.post('/nada', { a: 1 }), 'MODULO_NO_ENCONTRADO')
  })
  it('403 before 400, 413, 404 record and 409', async () => {
    fail(await failedPost('denuncias', { raw: '{"tipo": ', headers: JSON_CT }, tok.consulta), 'SIN_PERMISOS')
    fail(await failedPost('denuncias', { body: { inventado: 1 } }, tok.consulta), 'SIN_PERMISOS')
    fail(await failedPost('denuncias', {}, tok.consulta), 'SIN_PERMISOS')
    fail(await failedPost('denuncias', { body: { descripcion: 'x'.repeat(1024 * 1024) } }, tok.consulta), 'SIN_PERMISOS')
    fail(await consulta.put(`/denuncias/${MISSING_DEN}`, { prioridad: 'altisima' }), 'SIN_PERMISOS')
    fail(await consulta.del(`/denuncias/${MISSING_DEN}`), 'SIN_PERMISOS')
    fail(await consulta.put(`/denuncias/${denId}`, { lugar_hechos: 'Plaza', _version: 99 }), 'SIN_PERMISOS')
  })
  it('400 before 404 record', async () => {
    fail(await admin.put(`/denuncias/${MISSING_DEN}`, { prioridad: 'altisima' }), 'DATOS_INVALIDOS', ['prioridad'])
    fail(await admin.put(`/denuncias/${MISSING_DEN}`, {}), 'DATOS_REQUERIDOS')
    fail(await call(app, 'PUT', `/denuncias/${MISSING_DEN}`, { token: adminToken, raw: '{', headers: JSON_CT }), 'JSON_MAL_FORMADO')
  })
  it('404 record before 409', async () => {
    const tip = (await admin.get(`/personal/${refs.get('personal')!}`)).body.data.tip
    fail(await admin.put(`/denuncias/${MISSING_DEN}`, { lugar_hechos: 'Plaza', _version: 99 }), 'REGISTRO_NO_ENCONTRADO')
    fail(await admin.put(`/denuncias/${MISSING_DEN}`, { lugar_hechos: 'Plaza' }, { 'if-match': '"99"' }), 'REGISTRO_NO_ENCONTRADO')
    fail(await admin.del(`/denuncias/${MISSING_DEN}`, { 'if-match': '"99"' }), 'REGISTRO_NO_ENCONTRADO')
    fail(await admin.put('/personal/PER-2026-99999', { tip }), 'REGISTRO_NO_ENCONTRADO')
    fail(await admin.put(`/personal/${deletedPer}`, { tip }), 'REGISTRO_NO_ENCONTRADO')
  })
})

describe('no partial write', () => {
  it('failed creates leave no row and draw no id', async () => {
    const first = await created(await admin.post('/denuncias', body('denuncias')))
    fail(await failedPost('denuncias', { body: { ...body('denuncias'), agente_asignado: 'PER-2026-99999' } }), 'DATOS_INVALIDOS')
    fail(await failedPost('denuncias', { body: { ...body('denuncias'), fecha_hechos: '2026-03-29 02:30:00' } }), 'DATOS_INVALIDOS')
    fail(await failedPost('denuncias', { body: { ...body('denuncias'), lugar_hechos: undefined } }), 'DATOS_REQUERIDOS')
    fail(await failedPost('denuncias', { body: { ...body('denuncias'), importe: 1 } }), 'DATOS_INVALIDOS')
    fail(await failedPost('denuncias', { body: body('denuncias') }, tok.consulta), 'SIN_PERMISOS')
    const next = await created(await admin.post('/denuncias', body('denuncias')))
    expect(seq(next)).toBe(seq(first) + 1)
  })
})
