/**
 * `format: telefono` through HTTP (docs/administrator-guide.md "modules.yaml
 * reference"), on a modules.yaml that declares it on an encrypted searchable
 * field (personal.contacto_telefono), a plain required one
 * (vehiculos.telefono_taller) and a structured array's sub-field
 * (denuncias.testigos' telefono): a number typed with spaces, `+34`, `0034`
 * or another country's prefix is stored in its one form (`+34600112233`) and
 * found by a filter typed any of those ways; anything else is 400 `Datos
 * inválidos` naming the field in Spanish, nothing stored. The OpenAPI
 * document, the import's example and GET /me/modulos say it.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { parseRegistry } from '../../core/registry/load.js'
import { FORMATS } from '../../core/field-types/formats/index.js'
import { valueColumn } from '../../db/columns.js'
import type { Harness } from '../helpers/app.js'
import { call, ok, sampleBody, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

const PATTERN = FORMATS.telefono.pattern
const text = readFileSync('modules.yaml', 'utf8')
  .replace('contacto_telefono: { type: string, max_length: 30, encrypted: true,', 'contacto_telefono: { type: string, format: telefono, max_length: 30, encrypted: true, searchable: true,')
  .replace('          telefono: { type: string, max_length: 30, encrypted: true,', '          telefono: { type: string, format: telefono, max_length: 30, encrypted: true,')
  .replace(/(\n {2}vehiculos:[\s\S]*?\n {4}fields:\n)/, '$1      telefono_taller: { type: string, format: telefono, required: true, max_length: 30, label: Teléfono del taller }\n')
const registry = parseRegistry(text, 'telefono.yaml')
const mod = (name: string) => registry.byName.get(name)!

let h: Harness, app: FastifyInstance, api: Api, token: string
const refs = new Map<string, string>()

beforeAll(async () => {
  ({ h, app, admin: api, token } = await startTestApp({ registry }))
})
afterAll(async () => { await h.close() })

const rows = async (table: string): Promise<number> => Number((await h.db.query<{ n: string }>(`select count(*) as n from "${table}"`))[0]!.n)

describe('the test modules.yaml', () => {
  it('declares the format on the three fields', () => {
    expect(mod('personal').fieldMap.get('contacto_telefono')!.format).toBe('telefono')
    expect(mod('vehiculos').fieldMap.get('telefono_taller')!.format).toBe('telefono')
    expect(mod('denuncias').fieldMap.get('testigos')!.items!.find((s) => s.name === 'telefono')!.format).toBe('telefono')
  })
})

describe('a create', () => {
  it.each([
    ['600 11 22 33', '+34600112233'], ['+34 611 222 333', '+34611222333'], ['0034 912345678', '+34912345678'], ['+44 20 7946 0958', '+442079460958'],
  ])('%j is stored %j, found by a filter typed another way', async (typed, stored) => {
    const created = ok(await api.post('/vehiculos', { ...sampleBody(mod('vehiculos'), refs), telefono_taller: typed }), 201)
    expect(created.telefono_taller).toBe(stored)
    const [row] = await h.db.query<Record<string, string>>(`select "${valueColumn(mod('vehiculos').fieldMap.get('telefono_taller')!)}" as v from "vehiculos" where "_id" = $1`, [created._id])
    expect(row!.v).toBe(stored)
    const again = stored.startsWith('+34') ? stored.slice(3).replace(/(\d{3})(\d{3})(\d{3})/, '$1 $2 $3') : `00${stored.slice(1)}`
    const found = ok(await api.get(`/vehiculos?telefono_taller=${encodeURIComponent(again)}`))
    expect(found.records.map((r: { _id: string }) => r._id)).toEqual([created._id])
  })

  it.each([
    ['12345', 'no tiene el formato esperado'],
    ['600-11-22-33', 'no tiene el formato esperado'],
    ['+34 512 345 678', 'un teléfono español tiene 9 cifras y empieza por 6, 7, 8 o 9'],
  ])('%j: 400 naming the field, %j, nothing stored', async (typed, mensaje) => {
    const before = await rows('vehiculos')
    const res = await api.post('/vehiculos', { ...sampleBody(mod('vehiculos'), refs), telefono_taller: typed })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'telefono_taller', mensaje }])
    expect(await rows('vehiculos')).toBe(before)
  })

  it('an encrypted searchable field: stored in its one form, encrypted, found through the blind index however typed', async () => {
    const res = await api.post('/personal', { ...sampleBody(mod('personal'), refs), contacto_telefono: ' 699 000 111 ' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.data.contacto_telefono).toBe('+34699000111')
    const [row] = await h.db.query<Record<string, string>>(`select "${valueColumn(mod('personal').fieldMap.get('contacto_telefono')!)}" as v from "personal" where "_id" = $1`, [res.body.data._id])
    expect(row!.v).toMatch(/^v1:/)
    for (const typed of ['699000111', '+34 699 000 111', '0034699000111']) {
      const found = ok(await api.get(`/personal?contacto_telefono=${encodeURIComponent(typed)}`))
      expect(found.records.map((r: { _id: string }) => r._id), typed).toEqual([res.body.data._id])
    }
    const wrong = await api.put(`/personal/${res.body.data._id as string}`, { contacto_telefono: '+34 112 345 678' })
    expectError(wrong, 'DATOS_INVALIDOS')
    expect(wrong.body.detalles).toEqual([{ campo: 'contacto_telefono', mensaje: 'un teléfono español tiene 9 cifras y empieza por 6, 7, 8 o 9' }])
  })

  it('a structured array\'s sub-field: each item\'s number in its one form, a wrong one named by its path', async () => {
    const body = { ...sampleBody(mod('denuncias'), refs), testigos: [{ nombre: 'Eva', telefono: '0034 699 000 222' }, { nombre: 'Luis', telefono: '+351 912 345 678' }] }
    const created = ok(await api.post('/denuncias', body), 201)
    expect(created.testigos.map((t: { telefono: string }) => t.telefono)).toEqual(['+34699000222', '+351912345678'])
    const res = await api.post('/denuncias', { ...body, testigos: [{ nombre: 'Eva', telefono: '+34 412 345 678' }] })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'testigos[0].telefono', mensaje: 'un teléfono español tiene 9 cifras y empieza por 6, 7, 8 o 9' }])
  })
})

describe('what clients are told', () => {
  it('the OpenAPI document: its pattern, its description and its example in the stored form', async () => {
    const doc = (await call(app, 'GET', '/docs/json')).body
    const post = doc.paths['/vehiculos'].post.requestBody.content['application/json']
    expect(post.schema.properties.telefono_taller).toMatchObject({ type: 'string', pattern: PATTERN, description: FORMATS.telefono.description })
    expect(post.example.telefono_taller).toBe('+34600112233')
    expect(new RegExp(PATTERN, 'u').test(post.example.telefono_taller)).toBe(true)
  })

  it('the import\'s example files show a number as typed, and an import stores it in its one form', async () => {
    const doc = (await call(app, 'GET', '/docs/json')).body
    const content = doc.paths['/vehiculos/importar'].post.requestBody.content
    expect(content['text/csv'].example).toMatch(/\n600 11 22 33;/)
    expect(JSON.parse(content['application/x-ndjson'].example).telefono_taller).toBe('600 11 22 33')
    const csv = (content['text/csv'].example as string).replace('Texto de matricula', 'IMP-TEL-1')
    const done = ok(await call(app, 'POST', '/vehiculos/importar', { token, raw: csv, headers: { 'content-type': 'text/csv' } }), 201)
    expect(ok(await api.get(`/vehiculos/${done.ids[0] as string}`)).telefono_taller).toBe('+34600112233')
  })

  it('GET /me/modulos: the pattern, the format, the input and the filter', async () => {
    const data = ok(await api.get('/me/modulos')) as any[]
    const field = data.find((m) => m.nombre === 'vehiculos').campos.find((f: any) => f.nombre === 'telefono_taller')
    expect(field).toMatchObject({
      patron: PATTERN, formato: 'telefono', filtro: 'igual',
      entrada: { tipo: 'tel', modo: 'tel', autocompletar: 'off', indicacion: expect.stringContaining('600 11 22 33') },
    })
    const euros = data.find((m) => m.nombre === 'sanciones').campos.find((f: any) => f.nombre === 'importe')
    expect(euros).toMatchObject({ formato: 'euros', filtro: 'rango', entrada: { tipo: 'text', modo: 'decimal', indicacion: 'Importe en euros, con coma decimal (200,50)' } })
    expect(euros.patron).toBeUndefined()
  })
})
