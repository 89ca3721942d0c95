/**
 * GET /me/modulos (docs/user-guide.md "The modules you may see"), through
 * HTTP: every module the caller may `ver` with its label, fields, states,
 * the caller's actions and a list's columns; none it may not; a field added
 * to modules.yaml appears after a restart (SPEC S19: the console is built
 * from it at run time); no token, 401.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { call, login, ok } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

const registry = loadRegistry('modules.yaml')
let h: Harness, app: FastifyInstance, token: string

beforeAll(async () => { ({ h, app, token } = await startTestApp()) })
afterAll(async () => { await h.close() })

it('describes every module to a superadmin, with every action on every record', async () => {
  const data = ok(await call(app, 'GET', '/me/modulos', { token })) as any[]
  expect(data.map((m) => m.etiqueta)).toEqual(registry.modules.map((m) => m.label))
  const den = data.find((m) => m.nombre === 'denuncias')
  expect(den).toMatchObject({ ruta: 'denuncias', prefijo: 'DEN', campo_estado: 'estado', acciones: { ver: 'todos', crear: 'todos', descifrar: 'todos', exportar: 'todos' } })
  expect(den.campos.map((f: any) => f.nombre)).toEqual(registry.byName.get('denuncias')!.fields.map((f) => f.name))
  expect(den.campos.find((f: any) => f.nombre === 'denunciante_dni')).toMatchObject({ tipo: 'string', cifrado: true, formato: 'dni' })
  expect(den.campos.find((f: any) => f.nombre === 'testigos').elementos.map((f: any) => f.nombre)).toEqual(['nombre', 'dni', 'telefono', 'domicilio', 'declaracion'])
  expect(den.transiciones).toContainEqual({ desde: 'pendiente', a: 'investigacion', requiere: ['agente_asignado'] })
  // Columns: the state and short, readable fields; never an encrypted one.
  expect(den.columnas).toContain('estado')
  expect(den.columnas.length).toBeLessThanOrEqual(4)
  for (const name of den.columnas) expect(den.campos.find((f: any) => f.nombre === name).cifrado).toBe(false)
  const san = data.find((m) => m.nombre === 'sanciones')
  expect(san.campos.find((f: any) => f.tipo === 'ref')?.ref).toBeTypeOf('string')
})

it('describes to an agente only the modules it may see, with its own-only scopes', async () => {
  const agente = await newUser(app, token, 'agente')
  const data = ok(await call(app, 'GET', '/me/modulos', { token: agente.token })) as any[]
  const role = registry.roleMap.get('agente')!
  const seen = new Set(role.permissions.filter((p) => p.split(':')[0]!.endsWith('.ver')).map((p) => p.split('.')[0]))
  expect(data.map((m) => m.nombre)).toEqual(registry.modules.filter((m) => seen.has(m.name)).map((m) => m.name))
  expect(data.find((m) => m.nombre === 'usuarios')).toBeUndefined()
  expect(data.find((m) => m.nombre === 'denuncias').acciones).toEqual({ ver: 'propios', crear: 'todos', editar: 'propios', descifrar: 'propios' })
  expect(data.find((m) => m.nombre === 'vehiculos').acciones).toEqual({ ver: 'propios' })
})

it('shows a field added to modules.yaml after a restart', async () => {
  const text = readFileSync('modules.yaml', 'utf8').replace(/(\n {2}vehiculos:[\s\S]*?\n {4}fields:\n)/, '$1      color_consola: { type: string, max_length: 30 }\n')
  const again = await h.app({ registry: parseRegistry(text, 'temp.yaml') })
  const data = ok(await call(again, 'GET', '/me/modulos', { token: await login(again) })) as any[]
  expect(data.find((m) => m.nombre === 'vehiculos').campos.map((f: any) => f.nombre)).toContain('color_consola')
})

it('asks for a token', async () => {
  expectError(await call(app, 'GET', '/me/modulos'), 'TOKEN_NO_PROPORCIONADO')
})

it('gives a format\'s pattern as the field\'s, so a client checks what the API checks', async () => {
  const data = ok(await call(app, 'GET', '/me/modulos', { token })) as any[]
  const dni = data.find((m) => m.nombre === 'denuncias').campos.find((f: any) => f.nombre === 'denunciante_dni')
  const pattern = new RegExp(dni.patron, 'u')
  expect(pattern.test('12345678Z')).toBe(true)
  expect(pattern.test('1234')).toBe(false)
  // The API refuses what the pattern refuses, with the message the console shows.
  const res = await call(app, 'POST', '/denuncias', { token, body: { denunciante_nombre: 'A', tipo: 'hurto', fecha_hechos: '2026-06-01 10:00:00', lugar_hechos: 'B', descripcion: 'C', denunciante_dni: '1234' } })
  expect(res.body.detalles).toContainEqual({ campo: 'denunciante_dni', mensaje: 'no tiene el formato esperado' })
})

it('lists the columns modules.yaml declares (list_columns), and refuses at start one a cell cannot show', async () => {
  // On the previous test's file (its new column stays: dropping it would be refused).
  const withColour = readFileSync('modules.yaml', 'utf8').replace(/(\n {2}vehiculos:[\s\S]*?\n {4}fields:\n)/, '$1      color_consola: { type: string, max_length: 30 }\n')
  const declare = (columns: string, mod = 'vehiculos'): string => withColour.replace(new RegExp(`(\n {2}${mod}:\n)`), `$1    list_columns: ${columns}\n`)
  const again = await h.app({ registry: parseRegistry(declare('[marca, matricula, km_actuales]'), 'temp.yaml') })
  const data = ok(await call(again, 'GET', '/me/modulos', { token: await login(again) })) as any[]
  expect(data.find((m) => m.nombre === 'vehiculos').columnas).toEqual(['marca', 'matricula', 'km_actuales'])
  // The default elsewhere: the state and the first short fields.
  expect(data.find((m) => m.nombre === 'personal').columnas).toEqual(['tip', 'nombre', 'apellidos', 'situacion'])
  expect(() => parseRegistry(declare('[marca, matricla]'), 'temp.yaml')).toThrow(/modules\.vehiculos\.list_columns\.1.*unknown field "matricla".*matricula/s)
  expect(() => parseRegistry(declare('[tipo, adjuntos]', 'denuncias'), 'temp.yaml')).toThrow(/"adjuntos" is a file field/)
  expect(() => parseRegistry(declare('[]'), 'temp.yaml')).toThrow(/list_columns/)
})
