/**
 * `format: dni` (docs/administrator-guide.md "modules.yaml reference"): the default
 * modules.yaml declares it on every DNI/NIF field, and a DNI or NIE with a
 * wrong check letter is refused with 400 `Datos inválidos` naming the field,
 * before encryption, on create and update; a right one is stored trimmed
 * and in upper case (what the blind index folds), encrypted, and found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import { valueColumn } from '../../db/columns.js'
import type { Harness } from '../helpers/app.js'
import { call, sampleBody, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

const registry = loadRegistry('modules.yaml')
const mod = (name: string) => registry.byName.get(name)!
const LETTER = { campo: 'nif', mensaje: 'letra de control incorrecta' }

let h: Harness, app: FastifyInstance, api: Api
const refs = new Map<string, string>()

beforeAll(async () => {
  ({ h, app, admin: api } = await startTestApp())
})
afterAll(async () => { await h.close() })

async function staffCount (): Promise<number> {
  return Number((await h.db.query<{ n: string }>('select count(*) as n from "personal"'))[0]!.n)
}

describe('the default modules.yaml', () => {
  it('declares format dni on every DNI/NIF field', () => {
    const declared = registry.modules.flatMap((m) => m.fields.filter((f) => /(^|_)(dni|nif|nie)($|_)/.test(f.name)).map((f) => `${m.name}.${f.name}:${f.format ?? '-'}`))
    expect(declared.sort()).toEqual(['denuncias.denunciante_dni:dni', 'personal.nif:dni', 'sanciones.infractor_dni:dni'])
  })

  it('documents the shape in the OpenAPI document', async () => {
    const doc = (await call(app, 'GET', '/docs')).body
    const nif = JSON.stringify(doc.paths['/personal'].post)
    expect(nif).toContain('^ *(([0-9]{8}|[XYZxyz][0-9]{7})[A-Za-z] *)?$')
  })
})

describe('a DNI or NIE field', () => {
  it.each(['12345678A', '00000000A', 'X1234567T', 'Y1234567L', 'Z1234567X'])('%s: wrong check letter, 400 naming the field, nothing stored', async (nif) => {
    const before = await staffCount()
    const res = await api.post('/personal', { ...sampleBody(mod('personal'), refs), nif })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([LETTER])
    expect(await staffCount()).toBe(before)
  })

  it.each(['12345678-Z', '1234567Z', '12345678', 'A1234567L', '12 345678Z', 'X-1234567L'])('%s: not the shape of a DNI or NIE, 400', async (nif) => {
    const res = await api.post('/personal', { ...sampleBody(mod('personal'), refs), nif })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles.map((d: { campo: string }) => d.campo)).toEqual(['nif'])
  })

  it.each([
    ['12345678Z', '12345678Z'], [' 00000000t ', '00000000T'], ['x1234567l', 'X1234567L'], ['Y1234567X', 'Y1234567X'], ['Z1234567R', 'Z1234567R'],
  ])('%j: accepted, stored as %j (encrypted), found by any case', async (nif, stored) => {
    const res = await api.post('/personal', { ...sampleBody(mod('personal'), refs), nif })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.data.nif).toBe(stored)
    const [row] = await h.db.query<Record<string, string>>(`select "${valueColumn(mod('personal').fieldMap.get('nif')!)}" as v from "personal" where "_id" = $1`, [res.body.data._id])
    expect(row!.v).toMatch(/^v1:/)
    expect(row!.v).not.toContain(stored)
    const found = await api.get(`/personal?nif=${encodeURIComponent(nif.toLowerCase())}`)
    expect(found.body.data.records.map((r: { _id: string }) => r._id)).toEqual([res.body.data._id])
  })

  it('an update with a wrong letter is refused and changes nothing', async () => {
    const created = await api.post('/personal', { ...sampleBody(mod('personal'), refs), nif: '11111111H' })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const res = await api.put(`/personal/${created.body.data._id as string}`, { nif: '11111111A' })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([LETTER])
    expect((await api.get(`/personal/${created.body.data._id as string}`)).body.data).toMatchObject({ nif: '11111111H', _version: 1 })
  })

  it('denuncias.denunciante_dni and sanciones.infractor_dni check it too; null and an empty string mean none', async () => {
    const den = await api.post('/denuncias', { ...sampleBody(mod('denuncias'), refs), denunciante_dni: '87654321A' })
    expectError(den, 'DATOS_INVALIDOS')
    expect(den.body.detalles).toEqual([{ campo: 'denunciante_dni', mensaje: 'letra de control incorrecta' }])
    const san = await api.post('/sanciones', { ...sampleBody(mod('sanciones'), refs), infractor_dni: 'X0000000A' })
    expect(san.body.detalles).toEqual([{ campo: 'infractor_dni', mensaje: 'letra de control incorrecta' }])
    for (const value of [null, '', '87654321X']) {
      const ok = await api.post('/denuncias', { ...sampleBody(mod('denuncias'), refs), denunciante_dni: value })
      expect(ok.status, JSON.stringify(ok.body)).toBe(201)
      expect(ok.body.data.denunciante_dni).toBe(value)
    }
  })
})
