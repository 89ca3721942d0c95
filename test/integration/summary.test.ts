/**
 * GET /{module}/resumen over HTTP (docs/user-guide.md "Summaries (resumen)"):
 * counts and measures exact against a known set of sanciones, each date
 * bucket in the service zone (an instant at 23:30 UTC is the next day in
 * Madrid; an ISO week across a year boundary), the null-key group, sort and
 * limit, the list's filters and `q`, an agente's own records, the encrypted
 * filter's permission and read log, every 400 and the 403 without `ver`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { client, ok, validDni, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>

let h: Harness, token: string, app: FastifyInstance, admin: Api
let jefe: { id: string, api: Api }
let agente: Api
const DNI = validDni(44_556_677)

/**
 * The set: instants in UTC, with their day, ISO week, month, year and hour in Madrid.
 * #2 is 2026-06-01 23:30 UTC, 01:30 the next day in Madrid (summer, +2);
 * #3 is 2026-12-31 23:30 UTC, 2027-01-01 00:30 in Madrid (winter, +1), in ISO week 2026-W53;
 * #4 is Monday 2025-12-29, in ISO week 2026-W01.
 */
const SET = [
  { tipo: 'trafico', infractor_nombre: 'Ana García', importe: 100, puntos_carnet: 2, fecha_infraccion: '2026-06-01T10:15:00Z', fecha_notificacion: '2026-06-03', infractor_dni: DNI },
  { tipo: 'trafico', infractor_nombre: 'Luis Pérez', importe: 200.5, puntos_carnet: 4, fecha_infraccion: '2026-06-01T23:30:00Z', fecha_notificacion: '2026-06-10' },
  { tipo: 'ambiental', infractor_nombre: 'Ana Ruiz', importe: 300, fecha_infraccion: '2026-12-31T23:30:00Z' },
  { tipo: 'ordenanza_municipal', infractor_nombre: 'Eva Soler', importe: 50, puntos_carnet: 0, fecha_infraccion: '2025-12-29T09:00:00Z', fecha_notificacion: '2026-01-02' },
]

async function resumen (api: Api, query: string): Promise<Rec> {
  return ok(await api.get(`/sanciones/resumen${query}`))
}

beforeAll(async () => {
  ({ h, app, token, admin } = await startTestApp())
  const j = await newUser(app, token, 'jefe')
  jefe = { id: j.id, api: client(app, j.token) }
  agente = client(app, (await newUser(app, token, 'agente')).token)
  for (const body of SET) ok(await admin.post('/sanciones', { lugar_infraccion: 'Calle Mayor', ...body }), 201)
  // The agente's own record, and a deleted one that only incluir_eliminados counts.
  ok(await agente.post('/sanciones', { tipo: 'trafico', infractor_nombre: 'Propio', importe: 10, lugar_infraccion: 'Plaza', fecha_infraccion: '2026-06-05 12:00:00' }), 201)
  const gone = ok(await admin.post('/sanciones', { tipo: 'ambiental', infractor_nombre: 'Borrado', importe: 999, lugar_infraccion: 'Plaza', fecha_infraccion: '2026-06-05 12:00:00' }), 201)
  ok(await admin.del(`/sanciones/${gone._id}`))
})
afterAll(async () => { await h.close() })

describe('counts and measures', () => {
  it('without agrupar: one group with the totals', async () => {
    expect(await resumen(admin, '?medidas=suma:importe,media:importe,min:importe,max:importe,min:fecha_infraccion,max:fecha_notificacion,suma:puntos_carnet')).toEqual({
      grupos: [{
        cantidad: 5,
        'suma:importe': 660.5,
        'media:importe': 132.1,
        'min:importe': 10,
        'max:importe': 300,
        'min:fecha_infraccion': '2025-12-29 10:00:00',
        'max:fecha_notificacion': '2026-06-10',
        'suma:puntos_carnet': 6,
      }],
      total_grupos: 1,
      total: 5,
    })
  })

  it('by tipo: largest group first, each with its measures; a mean to the cent', async () => {
    const data = await resumen(admin, '?agrupar=tipo&medidas=suma:importe,media:importe&tipo[in]=trafico,ambiental,ordenanza_municipal')
    expect(data).toEqual({
      grupos: [
        { tipo: 'trafico', cantidad: 3, 'suma:importe': 310.5, 'media:importe': 103.5 },
        { tipo: 'ambiental', cantidad: 1, 'suma:importe': 300, 'media:importe': 300 },
        { tipo: 'ordenanza_municipal', cantidad: 1, 'suma:importe': 50, 'media:importe': 50 },
      ],
      total_grupos: 3,
      total: 5,
    })
    expect((await resumen(admin, '?medidas=media:importe&tipo=trafico&importe[gte]=100')).grupos).toEqual([{ cantidad: 2, 'media:importe': 150.25 }])
  })

  it('a record with no value falls in the group whose key is null', async () => {
    expect((await resumen(admin, '?agrupar=puntos_carnet&sort=puntos_carnet')).grupos).toEqual([
      { puntos_carnet: 0, cantidad: 1 },
      { puntos_carnet: 2, cantidad: 1 },
      { puntos_carnet: 4, cantidad: 1 },
      { puntos_carnet: null, cantidad: 2 },
    ])
  })

  it('three keys; a ref key is the id', async () => {
    const data = await resumen(admin, '?agrupar=tipo,estado,agente_denunciante')
    expect(data.total_grupos).toBe(3)
    expect(data.grupos[0]).toEqual({ tipo: 'trafico', estado: 'borrador', agente_denunciante: null, cantidad: 3 })
  })
})

describe('date buckets in the service time zone', () => {
  it.each<[string, Array<[string | null, number]>]>([
    ['dia', [['2025-12-29', 1], ['2026-06-01', 1], ['2026-06-02', 1], ['2026-06-05', 1], ['2027-01-01', 1]]],
    ['semana', [['2026-W23', 3], ['2026-W01', 1], ['2026-W53', 1]]],
    ['mes', [['2026-06', 3], ['2025-12', 1], ['2027-01', 1]]],
    ['año', [['2026', 3], ['2025', 1], ['2027', 1]]],
    ['hora', [['2025-12-29 10', 1], ['2026-06-01 12', 1], ['2026-06-02 01', 1], ['2026-06-05 12', 1], ['2027-01-01 00', 1]]],
  ])('fecha_infraccion:%s', async (bucket, groups) => {
    const key = `fecha_infraccion:${bucket}`
    const data = await resumen(admin, `?agrupar=${encodeURIComponent(key)}`)
    // Largest first, ties by the key ascending.
    const expected = [...groups].sort((a, b) => b[1] - a[1] || (a[0]! < b[0]! ? -1 : 1)).map(([k, n]) => ({ [key]: k, cantidad: n }))
    expect(data.grupos).toEqual(expected)
    expect(data.total).toBe(5)
  })

  it('a date field by month, and its records without a value in the null group', async () => {
    expect((await resumen(admin, '?agrupar=fecha_notificacion:mes&sort=fecha_notificacion:mes')).grupos).toEqual([
      { 'fecha_notificacion:mes': '2026-01', cantidad: 1 },
      { 'fecha_notificacion:mes': '2026-06', cantidad: 2 },
      { 'fecha_notificacion:mes': null, cantidad: 2 },
    ])
    expect((await resumen(admin, '?agrupar=fecha_notificacion:semana&fecha_notificacion[vacio]=false&sort=-fecha_notificacion:semana')).grupos)
      .toEqual([{ 'fecha_notificacion:semana': '2026-W24', cantidad: 1 }, { 'fecha_notificacion:semana': '2026-W23', cantidad: 1 }, { 'fecha_notificacion:semana': '2026-W01', cantidad: 1 }])
  })

  it('the system dates group too', async () => {
    const year = (await resumen(admin, '?agrupar=_created:a%C3%B1o')).grupos
    expect(year).toEqual([{ '_created:año': expect.stringMatching(/^\d{4}$/), cantidad: 5 }])
  })
})

describe('sort and limit', () => {
  it('sort on a measure, descending; limit cuts the groups but not the totals', async () => {
    const data = await resumen(admin, '?agrupar=tipo&medidas=suma:importe&sort=-suma:importe&limit=2')
    expect(data).toEqual({
      grupos: [{ tipo: 'trafico', cantidad: 3, 'suma:importe': 310.5 }, { tipo: 'ambiental', cantidad: 1, 'suma:importe': 300 }],
      total_grupos: 3,
      total: 5,
    })
  })

  it('sort on a key ascending and on cantidad ascending', async () => {
    expect((await resumen(admin, '?agrupar=tipo&sort=tipo')).grupos.map((g: Rec) => g.tipo)).toEqual(['ambiental', 'ordenanza_municipal', 'trafico'])
    expect((await resumen(admin, '?agrupar=tipo&sort=cantidad')).grupos.map((g: Rec) => g.tipo)).toEqual(['ambiental', 'ordenanza_municipal', 'trafico'])
  })

  it('a limit above 1000 is served as 1000', async () => {
    expect((await resumen(admin, '?agrupar=tipo&limit=5000')).total_grupos).toBe(3)
  })
})

describe('filters, q, deleted records and scope', () => {
  it('the list\'s filters and q narrow the records counted', async () => {
    expect(await resumen(admin, '?agrupar=tipo&q=ana')).toEqual({
      grupos: [{ tipo: 'ambiental', cantidad: 1 }, { tipo: 'trafico', cantidad: 1 }],
      total_grupos: 2,
      total: 2,
    })
    expect((await resumen(admin, '?fecha_infraccion[gte]=2026-06-02%2000:00:00&fecha_infraccion[lt]=2027-01-01%2000:00:00')).total).toBe(2)
    expect(await resumen(admin, '?agrupar=tipo&importe[gt]=100000')).toEqual({ grupos: [], total_grupos: 0, total: 0 })
  })

  it('an o[N] group narrows the records counted: any of its conditions, ANDed with the other filters', async () => {
    const any = await resumen(admin, '?agrupar=tipo&o[1][tipo]=ambiental&o[1][importe][lte]=50')
    expect(any.total).toBe(3)
    expect(any.grupos).toEqual(expect.arrayContaining([{ tipo: 'ambiental', cantidad: 1 }, { tipo: 'ordenanza_municipal', cantidad: 1 }, { tipo: 'trafico', cantidad: 1 }]))
    expect((await resumen(admin, '?o[1][tipo]=ambiental&o[1][importe][lte]=50&tipo[ne]=trafico')).total).toBe(2)
  })

  it('incluir_eliminados counts the deleted record, for whoever may delete', async () => {
    expect((await resumen(admin, '?incluir_eliminados=true')).total).toBe(6)
    expectError(await jefe.api.get('/sanciones/resumen?incluir_eliminados=true'), 'SIN_PERMISOS')
  })

  it('an agente counts only their own records', async () => {
    expect(await resumen(agente, '?agrupar=tipo&medidas=suma:importe')).toEqual({ grupos: [{ tipo: 'trafico', cantidad: 1, 'suma:importe': 10 }], total_grupos: 1, total: 1 })
  })

  it('a filter on an encrypted field needs descifrar and leaves a busqueda in the read log', async () => {
    const consulta = client(app, (await newUser(app, token, 'consulta')).token)
    expectError(await consulta.get(`/sanciones/resumen?infractor_dni=${DNI}`), 'SIN_PERMISOS')
    // An agente decrypts its own records only: the DNI is not on its one sanction.
    expect(await resumen(agente, `?infractor_dni=${DNI}`)).toEqual({ grupos: [{ cantidad: 0 }], total_grupos: 1, total: 0 })
    expect(await resumen(jefe.api, `?infractor_dni=${DNI}&agrupar=tipo`)).toEqual({ grupos: [{ tipo: 'trafico', cantidad: 1 }], total_grupos: 1, total: 1 })
    const rows = await h.db.query('select tipo, modulo, campos, coincidencias, ruta from sys_lecturas where usuario = $1', [jefe.id])
    expect(rows).toEqual([{ tipo: 'busqueda', modulo: 'sanciones', campos: ['infractor_dni'], coincidencias: 1, ruta: 'GET /sanciones/resumen' }])
  })

  it('403 without ver, before the query is read', async () => {
    expectError(await agente.get('/atestados/resumen?agrupar=nada'), 'SIN_PERMISOS')
  })

  it('/resumen is not read as a record id', async () => {
    expect(ok(await admin.get('/vehiculos/resumen'))).toEqual({ grupos: [{ cantidad: 0 }], total_grupos: 1, total: 0 })
  })
})

describe('400 naming the parameter', () => {
  it.each<[string, string, RegExp]>([
    ['agrupar=tpo', 'agrupar', /campo desconocido "tpo".*"tipo"/],
    ['agrupar=infractor_dni', 'agrupar', /cifrado/],
    ['agrupar=infraccion_descripcion', 'agrupar', /no se puede agrupar/],
    ['agrupar=fecha_infraccion', 'agrupar', /indique un intervalo/],
    ['agrupar=fecha_infraccion:mess', 'agrupar', /intervalo desconocido.*"mes"/],
    ['agrupar=fecha_notificacion:hora', 'agrupar', /hora/],
    ['agrupar=tipo:mes', 'agrupar', /no es una fecha/],
    ['agrupar=tipo,estado,agente_denunciante,puntos_carnet', 'agrupar', /como máximo 3/],
    ['agrupar=tipo,tipo', 'agrupar', /repite/],
    ['agrupar=tipo,', 'agrupar', /vacío/],
    ['medidas=sum:importe', 'medidas', /medida desconocida "sum".*"suma"/],
    ['medidas=suma:importes', 'medidas', /campo desconocido "importes".*"importe"/],
    ['medidas=suma:fecha_infraccion', 'medidas', /min y max/],
    ['medidas=media:tipo', 'medidas', /solo se mide un número/],
    ['medidas=max:infractor_domicilio', 'medidas', /cifrado/],
    ['medidas=importe', 'medidas', /medida:campo/],
    ['sort=-suma:importe', 'sort', /no se puede ordenar/],
    ['agrupar=tipo&sort=tipos', 'sort', /"tipo"/],
    ['limit=0', 'limit', /mayor o igual que 1/],
    ['offset=10', 'offset', /limit/],
    ['tipoo=trafico', 'tipoo', /"tipo"/],
    ['agrupar=tipo&agrupar=estado', 'agrupar', /varios valores/],
  ])('%s', async (query, campo, mensaje) => {
    const res = await admin.get(`/sanciones/resumen?${query}`)
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo, mensaje: expect.stringMatching(mensaje) }])
  })
})
