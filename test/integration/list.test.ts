/**
 * GET /{module} over HTTP (docs/user-guide.md "Listing"): paging without overlap or gap under
 * several orders, the filter operators, soft-deleted records, blind-index
 * search on an encrypted field, and masking of encrypted fields in lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { client, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>

let h: Harness, token: string, app: FastifyInstance, admin: Api
let adminId: string
let jefe: { id: string, api: Api }
let agente: Api
let administrador: Api
const vehs: Rec[] = []

const MARCAS = ['Seat', 'Renault', 'Peugeot', 'Seat', 'Citroen']
const MODELOS = ['Ibiza', 'Megane Sport', '308', 'León', 'Berlingo']
const TIPOS = ['patrulla', 'moto', 'furgon', 'todoterreno']
const ESTADOS = ['operativo', 'taller', 'baja']
const ITV = ['2026-01-31', '2026-05-15', '2026-05-15', '2027-02-28', '2025-11-30', '2026-09-01']

/** `?k=v&…` with values encoded; a key may repeat. */
const qs = (...pairs: Array<[string, string | number]>): string => `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`
const ids = (recs: Rec[]): string[] => recs.map((r) => r._id as string).sort()

async function list (api: Api, query = ''): Promise<{ records: Rec[], total: number, limit: number, offset: number }> {
  const res = await api.get(`/vehiculos${query}`)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(res.body.success).toBe(true)
  return res.body.data
}

/** Ids of every matching record, page by page (offset = (page - 1) * limit). */
async function walk (extra: Array<[string, string]>, limit = 7): Promise<string[]> {
  const first = await list(admin, qs(...extra, ['limit', limit]))
  const pages = Math.ceil(first.total / limit)
  const seen: string[] = []
  for (let page = 1; page <= pages; page++) {
    const offset = (page - 1) * limit
    const data = await list(admin, qs(...extra, ['limit', limit], ['offset', offset]))
    expect(data).toMatchObject({ total: first.total, limit, offset })
    expect(data.records).toHaveLength(Math.min(limit, first.total - offset))
    seen.push(...data.records.map((r) => r._id as string))
  }
  expect((await list(admin, qs(...extra, ['limit', limit], ['offset', pages * limit]))).records).toEqual([])
  return seen
}

const cmp = (a: unknown, b: unknown): number => (a === b ? 0 : (a as string | number) < (b as string | number) ? -1 : 1)

beforeAll(async () => {
  ({ h, app, token, admin } = await startTestApp())
  adminId = (await admin.get('/me')).body.data._id
  const j = await newUser(app, token, 'jefe')
  jefe = { id: j.id, api: client(app, j.token) }
  agente = client(app, (await newUser(app, token, 'agente')).token)
  administrador = client(app, (await newUser(app, token, 'administrador')).token)
  for (let i = 0; i < 25; i++) {
    const body = {
      matricula: `${1000 + i}BCD`,
      marca: i === 24 ? 'seat' : MARCAS[i % 5],
      modelo: MODELOS[i % 5],
      tipo: TIPOS[i % 4],
      bastidor: `BAS${i}`,
      km_actuales: (i % 3) * 5000,
      fecha_itv: ITV[i % 6],
      estado: ESTADOS[i % 3],
    }
    const res = await (i === 24 ? jefe.api : admin).post('/vehiculos', body)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    vehs.push(res.body.data)
  }
})
afterAll(async () => { await h.close() })

describe('paging', () => {
  it('echoes total, limit and offset', async () => {
    expect(await list(admin)).toMatchObject({ total: 25, limit: 100, offset: 0 })
    const data = await list(admin, qs(['limit', 5], ['offset', 10]))
    expect(data).toMatchObject({ total: 25, limit: 5, offset: 10 })
    expect(data.records).toHaveLength(5)
    expect(await list(admin, qs(['offset', 30]))).toMatchObject({ total: 25, records: [], offset: 30 })
  })

  it.each<[string, Array<[string, string]>, (a: Rec, b: Rec) => number]>([
    ['default order (-_created, _id)', [], (a: Rec, b: Rec) => cmp(b._created, a._created) || cmp(b._id, a._id)],
    ['sort=km_actuales (ties broken by _id)', [['sort', 'km_actuales']], (a: Rec, b: Rec) => cmp(a.km_actuales, b.km_actuales) || cmp(a._id, b._id)],
    ['sort=-fecha_itv,matricula', [['sort', '-fecha_itv,matricula']], (a: Rec, b: Rec) => cmp(b.fecha_itv, a.fecha_itv) || cmp(a.matricula, b.matricula)],
  ])('pages of 7 visit every record once: %s', async (_name, extra, order) => {
    const seen = await walk(extra)
    expect(new Set(seen).size).toBe(seen.length)
    expect([...seen].sort()).toEqual(ids(vehs))
    expect(seen).toEqual([...vehs].sort(order).map((r) => r._id))
    // Asking again gives the same pages.
    expect(await walk(extra)).toEqual(seen)
  })

  it('a limit above 1000 is served and echoed as 1000', async () => {
    const data = await list(admin, qs(['limit', 5000]))
    expect(data.limit).toBe(1000)
    expect(data.records).toHaveLength(25)
  })

  it.each([
    ['limit', '0'], ['limit', '-1'], ['limit', '1.5'], ['limit', 'abc'], ['offset', '-1'], ['offset', 'x'],
  ])('%s=%s is 400', async (key, v) => {
    const res = await admin.get(`/vehiculos${qs([key, v])}`)
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles?.[0]?.campo).toBe(key)
  })

  it('sorting by an unknown field is 400', async () => {
    expectError(await admin.get('/vehiculos?sort=kilometros'), 'DATOS_INVALIDOS')
  })
})

describe('filters', () => {
  const expectIds = async (query: string, pick: (r: Rec) => boolean): Promise<void> => {
    const expected = ids(vehs.filter(pick))
    expect(expected.length).toBeGreaterThan(0)
    const data = await list(admin, query)
    expect(data.total).toBe(expected.length)
    expect(ids(data.records)).toEqual(expected)
  }

  it('?campo=valor is an exact, case-sensitive match', async () => {
    await expectIds(qs(['marca', 'Seat']), (r) => r.marca === 'Seat')
    await expectIds(qs(['marca', 'seat']), (r) => r.marca === 'seat')
    expect((await list(admin, qs(['marca', 'Sea']))).total).toBe(0)
    await expectIds(qs(['modelo', 'León']), (r) => r.modelo === 'León')
  })

  it('several filters combine with AND', async () => {
    await expectIds(qs(['marca', 'Seat'], ['estado', 'operativo']), (r) => r.marca === 'Seat' && r.estado === 'operativo')
    await expectIds(qs(['tipo', 'moto'], ['km_actuales', 5000], ['estado', 'taller']), (r) => r.tipo === 'moto' && r.km_actuales === 5000 && r.estado === 'taller')
  })

  it('a repeated parameter means any of the values', async () => {
    await expectIds(qs(['estado', 'taller'], ['estado', 'baja']), (r) => r.estado === 'taller' || r.estado === 'baja')
  })

  it('[gte] / [lt] ranges on integers and dates', async () => {
    await expectIds(qs(['km_actuales[gte]', 5000], ['km_actuales[lt]', 10000]), (r) => r.km_actuales >= 5000 && r.km_actuales < 10000)
    await expectIds(qs(['km_actuales[gt]', 0]), (r) => r.km_actuales > 0)
    await expectIds(qs(['fecha_itv[gte]', '2026-01-01'], ['fecha_itv[lte]', '2026-12-31']), (r) => r.fecha_itv >= '2026-01-01' && r.fecha_itv <= '2026-12-31')
  })

  it('[in] takes a comma list, [ne] excludes a value', async () => {
    await expectIds(qs(['tipo[in]', 'moto,furgon']), (r) => r.tipo === 'moto' || r.tipo === 'furgon')
    await expectIds(qs(['estado[ne]', 'operativo']), (r) => r.estado !== 'operativo')
  })

  it('[contiene] is a case-insensitive substring', async () => {
    await expectIds(qs(['modelo[contiene]', 'eGA']), (r) => r.modelo === 'Megane Sport')
    await expectIds(qs(['marca[contiene]', 'SEAT']), (r) => r.marca.toLowerCase() === 'seat')
    expect((await list(admin, qs(['modelo[contiene]', '%']))).total).toBe(0)
  })

  it('system fields: _created_by and _id', async () => {
    await expectIds(qs(['_created_by', jefe.id]), (r) => r._created_by === jefe.id)
    await expectIds(qs(['_created_by', adminId]), (r) => r._created_by === adminId)
    await expectIds(qs(['_id', vehs[3]!._id]), (r) => r._id === vehs[3]!._id)
  })

  it('_created[gte] with a datetime in the service time zone', async () => {
    const last = vehs.map((r) => r._created as string).sort().at(-1)!
    await expectIds(qs(['_created[gte]', last]), (r) => r._created >= last)
    await expectIds(qs(['_created[lte]', last]), () => true)
    const first = vehs[0]!._created as string
    expect((await list(admin, qs(['_created[lt]', first]))).total).toBe(0)
    expect((await list(admin, qs(['_created[gte]', '2999-01-01 00:00:00']))).total).toBe(0)
    expectError(await admin.get(`/vehiculos${qs(['_created[gte]', '2026-03-29 02:30:00'])}`), 'DATOS_INVALIDOS')
  })

  it('an unknown field or an operator that does not fit is 400', async () => {
    const res = await admin.get('/vehiculos?matriclua=1000BCD')
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles[0].mensaje).toMatch(/matricula/)
    expectError(await admin.get('/vehiculos?km_actuales[contiene]=5'), 'DATOS_INVALIDOS')
    expectError(await admin.get('/vehiculos?km_actuales=mucho'), 'DATOS_INVALIDOS')
  })
})

describe('soft-deleted records', () => {
  let gone: string
  let kept: string

  beforeAll(async () => {
    const mk = async (n: number): Promise<string> => {
      const res = await admin.post('/vehiculos', { matricula: `9${n}ZZZ`, tipo: 'moto', marca: 'Borrable' })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      return res.body.data._id
    }
    gone = await mk(1)
    kept = await mk(2)
    expect((await admin.del(`/vehiculos/${gone}`)).status).toBe(200)
  })

  it('are left out of lists and of total', async () => {
    const data = await list(admin, qs(['marca', 'Borrable']))
    expect(data.total).toBe(1)
    expect(ids(data.records)).toEqual([kept])
    expect((await list(admin, qs(['_id', gone]))).total).toBe(0)
    const all = await list(admin, qs(['limit', 1000]))
    expect(all.total).toBe(26)
    expect(all.records.map((r) => r._id)).not.toContain(gone)
  })

  it('?incluir_eliminados=true lists them for callers with vehiculos.eliminar', async () => {
    for (const api of [admin, administrador]) {
      const data = await list(api, qs(['marca', 'Borrable'], ['incluir_eliminados', 'true']))
      expect(data.total).toBe(2)
      expect(ids(data.records)).toEqual([gone, kept].sort())
      expect(data.records.find((r) => r._id === gone)!._deleted).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      expect((await list(api, qs(['incluir_eliminados', 'true']))).total).toBe(27)
    }
    expect((await list(admin, qs(['marca', 'Borrable'], ['incluir_eliminados', 'false']))).total).toBe(1)
  })

  it('?incluir_eliminados=true is 403 without vehiculos.eliminar', async () => {
    expectError(await jefe.api.get('/vehiculos?incluir_eliminados=true'), 'SIN_PERMISOS')
    expectError(await agente.get('/vehiculos?incluir_eliminados=true'), 'SIN_PERMISOS')
    expect((await list(jefe.api, qs(['incluir_eliminados', 'false']))).total).toBe(26)
  })
})

describe('encrypted fields in lists (personal)', () => {
  const NIF = '12345678z '
  /** As stored: format dni trims and upper-cases it, as the blind index does. */
  const STORED = '12345678Z'
  let target: string

  beforeAll(async () => {
    const mk = async (n: number, nif: string): Promise<string> => {
      const res = await admin.post('/personal', {
        tip: `TIP-${n}`, nif, nombre: `Nombre ${n}`, apellidos: 'García', escala: 'oficial',
        fecha_nacimiento: '1985-04-12', contacto_telefono: `60000000${n}`,
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      return res.body.data._id
    }
    target = await mk(1, NIF)
    await mk(2, '87654321X')
  })

  it('?nif= finds the record by its normalised value through the blind index', async () => {
    for (const api of [admin, jefe.api]) {
      for (const q of ['12345678Z', '12345678z', ' 12345678Z']) {
        const res = await api.get(`/personal${qs(['nif', q])}`)
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        expect(res.body.data.total).toBe(1)
        expect(res.body.data.records[0]._id).toBe(target)
        expect(res.body.data.records[0].nif).toBe(STORED)
      }
    }
    expect((await admin.get(`/personal${qs(['nif', '00000000A'])}`)).body.data.total).toBe(0)
    expect((await admin.get(`/personal${qs(['nif[in]', '12345678Z,87654321x'])}`)).body.data.total).toBe(2)
  })

  it('filtering on an encrypted field needs personal.descifrar (403), a non-searchable one is 400', async () => {
    expectError(await agente.get(`/personal${qs(['nif', '12345678Z'])}`), 'SIN_PERMISOS')
    expectError(await admin.get(`/personal${qs(['fecha_nacimiento', '1985-04-12'])}`), 'DATOS_INVALIDOS')
    expectError(await admin.get('/personal?sort=nif'), 'DATOS_INVALIDOS')
  })

  it('agente sees encrypted fields withheld and named in _restringidos', async () => {
    const res = await agente.get('/personal')
    expect(res.status).toBe(200)
    expect(res.body.data.total).toBe(2)
    for (const r of res.body.data.records) {
      for (const f of ['nif', 'fecha_nacimiento', 'contacto_telefono']) expect(r).not.toHaveProperty(f)
      expect([...r._restringidos].sort()).toEqual(['contacto_telefono', 'fecha_nacimiento', 'nif'])
      expect(r.nombre).toMatch(/^Nombre /)
    }
    expect(JSON.stringify(res.body)).not.toContain('12345678')
  })

  it('jefe gets plaintext and no _restringidos key', async () => {
    const data = (await jefe.api.get('/personal')).body.data
    for (const r of data.records) expect(r).not.toHaveProperty('_restringidos')
    const t = data.records.find((r: Rec) => r._id === target)
    expect(t).toMatchObject({ nif: STORED, fecha_nacimiento: '1985-04-12', contacto_telefono: '600000001' })
  })

  it('the database never holds the plaintext', async () => {
    const rows = await h.db.query<Record<string, string>>('select * from personal where "_id" = $1', [target])
    expect(rows).toHaveLength(1)
    const row = rows[0]!
    expect(row.nif).toMatch(/^v1:/)
    expect(row.nif!.toUpperCase()).not.toContain('12345678')
    expect(JSON.stringify(row).toUpperCase()).not.toContain('12345678')
    expect(JSON.stringify(row)).not.toContain('1985-04-12')
    expect(JSON.stringify(row)).not.toContain('600000001')
  })
})
