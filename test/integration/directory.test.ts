/**
 * GET /directorio (docs/user-guide.md "People by name (directorio)"),
 * through HTTP: any signed-in caller gets the names of the users (their
 * `nombre`) and staff members (`nombre apellidos`) among the ids it asks
 * about, in its order, deleted ones included; unknown ids and ids of other
 * modules are left out; no ids, or more than 200, is refused; no token, 401.
 * Checked in the database: the names are the stored ones.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { call, ok, validDni } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

let h: Harness, app: FastifyInstance, token: string
let staff: string, gone: string, vehicle: string

beforeAll(async () => {
  ({ h, app, token } = await startTestApp())
  const person = async (n: number, nombre: string, apellidos: string): Promise<string> =>
    ok(await call(app, 'POST', '/personal', { token, body: { tip: String(n), nif: validDni(n), nombre, apellidos, escala: 'oficial' } }), 201)._id as string
  staff = await person(90001, 'Rigoberta', 'Menchú Pérez')
  gone = await person(90002, 'Lucía', 'Cervantes')
  expect((await call(app, 'DELETE', `/personal/${gone}`, { token })).status).toBe(200)
  vehicle = ok(await call(app, 'POST', '/vehiculos', { token, body: { matricula: '1234-ABC', tipo: 'patrulla' } }), 201)._id as string
})
afterAll(async () => { await h.close() })

it('names users and staff members for any signed-in role, in the order asked, leaving out what is nobody', async () => {
  const agente = await newUser(app, token, 'agente', { nombre: 'Ana Agente', personal_id: staff })
  const adminId = ok(await call(app, 'GET', '/me', { token }))._id as string
  const ids = [agente.id, 'USR-2026-99999', staff, vehicle, gone, adminId, 'cualquier cosa']
  const data = ok(await call(app, 'GET', `/directorio?ids=${encodeURIComponent(ids.join(','))}`, { token: agente.token }))
  const admin = await h.db.query<{ nombre: string }>('select nombre from usuarios where "_id" = $1', [adminId])
  expect(data).toEqual([
    { id: agente.id, nombre: 'Ana Agente' },
    { id: staff, nombre: 'Rigoberta Menchú Pérez' },
    { id: gone, nombre: 'Lucía Cervantes' },
    { id: adminId, nombre: admin[0]!.nombre },
  ])
  // What is no record id (a NUL, too long, lower case) names nobody: left out, never a database error.
  const odd = [`${staff}\u0000`, `USR-2026-${'9'.repeat(40)}`, staff.toLowerCase(), 'USR-2026-1']
  expect(ok(await call(app, 'GET', `/directorio?ids=${encodeURIComponent([...odd, staff].join(','))}`, { token: agente.token }))).toEqual([{ id: staff, nombre: 'Rigoberta Menchú Pérez' }])
  // Repeated and duplicated ids: one answer each.
  expect(ok(await call(app, 'GET', `/directorio?ids=${staff}&ids=${staff},${staff}`, { token: agente.token }))).toEqual([{ id: staff, nombre: 'Rigoberta Menchú Pérez' }])
})

it('refuses no ids and more than 200, and a caller without a token', async () => {
  const none = await call(app, 'GET', '/directorio?ids=', { token })
  expectError(none, 'DATOS_REQUERIDOS')
  expect(none.body.detalles).toEqual([{ campo: 'ids', mensaje: 'es obligatorio' }])
  const many = Array.from({ length: 201 }, (_, i) => `USR-2026-${String(i).padStart(5, '0')}`).join(',')
  const refused = await call(app, 'GET', `/directorio?ids=${many}`, { token })
  expectError(refused, 'DATOS_INVALIDOS')
  expect(refused.body.detalles).toEqual([{ campo: 'ids', mensaje: 'admite como máximo 200 ids por consulta' }])
  // 200 is allowed: the two users among them are named.
  expect(ok(await call(app, 'GET', `/directorio?ids=${many.split(',').slice(0, 200).join(',')}`, { token })).map((p: { id: string }) => p.id)).toEqual(['USR-2026-00001', 'USR-2026-00002'])
  expectError(await call(app, 'GET', `/directorio?ids=${staff}`), 'TOKEN_NO_PROPORCIONADO')
})
