/**
 * Hostile bodies and the input rules of docs/operator-guide.md "Hostile input":
 * 1 MiB bodies of the worst shapes answer 400 in the error envelope with at
 * most 20 `detalles` and write nothing (their CPU cost is measured by
 * `npm run bench:hostile`, not here); invalid UTF-8 is `JSON mal formado`;
 * a number a double cannot hold, anywhere in the body, is `Datos inválidos`
 * naming the field; dates and date-times outside the years 1000–9999 are
 * `Datos inválidos` in bodies and in filters; accepted values read back
 * exactly as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ERRORS, type ErrorCode } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { call, refOrder, sampleBody, type Res } from '../helpers/http.js'
import { errorOf, expectError } from '../helpers/errors.js'
import { HOSTILE_SHAPES } from '../helpers/hostile-shapes.js'
import { startTestApp } from '../helpers/test-app.js'

const registry = loadRegistry('modules.yaml')
const mod = (name: string) => registry.byName.get(name)!
const MiB = 1024 * 1024

let h: Harness, app: FastifyInstance, token: string
const refs = new Map<string, string>()
let denuncia: string
/** A record with a plain array (atestados.diligencias; denuncias.adjuntos holds files). */
let atestado: string

beforeAll(async () => {
  ({ h, app, token } = await startTestApp())
  for (const m of refOrder(registry)) {
    if (m.name === 'usuarios') continue
    const res = await call(app, 'POST', `/${m.path}`, { token, body: sampleBody(m, refs) })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    refs.set(m.name, res.body.data._id)
  }
  denuncia = refs.get('denuncias')!
  atestado = refs.get('atestados')!
})
afterAll(async () => { await h?.close() })

const send = async (method: 'POST' | 'PUT' | 'GET', url: string, payload?: string | Buffer): Promise<Res> => {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(payload !== undefined && { payload }) })
  let body: unknown
  try { body = res.json() } catch { body = res.body }
  return { status: res.statusCode, body, headers: res.headers }
}

/** Rows of every module table, history rows, and the target record: what a refused request must leave alone. */
async function state (): Promise<unknown> {
  const counts: Record<string, number> = {}
  for (const m of registry.modules) counts[m.table] = (await h.db.query<{ n: number }>(`select count(*)::int as n from "${m.table}"`))[0]!.n
  const history = (await h.db.query<{ n: number }>('select count(*)::int as n from sys_historial'))[0]!.n
  const row = (await h.db.query('select * from denuncias where "_id" = $1', [denuncia]))[0]
  return { counts, history, row }
}

function s9Error (res: Res, code: ErrorCode): void {
  expectError(res, code)
  const { detalles, ...rest } = res.body as Record<string, unknown>
  expect(rest).toEqual(errorOf(code))
  if (detalles !== undefined) {
    expect(Array.isArray(detalles) && detalles.length >= 1 && detalles.length <= 20, JSON.stringify(detalles)).toBe(true)
    for (const d of detalles as unknown[]) expect(d).toEqual({ campo: expect.any(String), mensaje: expect.any(String) })
  }
}

describe('worst-shape bodies (no request holds the event loop)', () => {
  it.each(HOSTILE_SHAPES.map((s) => [s.name, s] as const))('%s: 400 in the envelope, at most 20 detalles, nothing written', async (_name, shape) => {
    const body = shape.body()
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MiB)
    expect(Buffer.byteLength(body)).toBeGreaterThan(MiB * 0.5)
    const before = await state()
    for (const [method, url] of [['POST', '/denuncias'], ['PUT', `/denuncias/${denuncia}`]] as const) {
      const res = await send(method, url, body)
      const code = (['DATOS_INVALIDOS', 'DATOS_REQUERIDOS', 'JSON_MAL_FORMADO'] as const).find((c) => ERRORS[c].message === res.body.error)
      expect(code, JSON.stringify(res.body)).toBeDefined()
      s9Error(res, code!)
    }
    expect(await state()).toEqual(before)
  })

  it('validation stops at 20 errors: 30 unknown keys give exactly 20 detalles', async () => {
    const body = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`desconocido_${i}`, i]))
    const res = await send('PUT', `/denuncias/${denuncia}`, JSON.stringify(body))
    s9Error(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toHaveLength(20)
    expect(res.body.detalles[0]).toEqual({ campo: 'desconocido_0', mensaje: 'no es un campo de este módulo' })
  })

  it('and so do 200 bad array items (schema errors) and missing fields with unknown keys (Datos requeridos first)', async () => {
    const items = await send('PUT', `/denuncias/${denuncia}`, JSON.stringify({ adjuntos: Array(200).fill('x'.repeat(2001)) }))
    s9Error(items, 'DATOS_INVALIDOS')
    expect(items.body.detalles.length).toBeLessThanOrEqual(20)
    const missing = await send('POST', '/denuncias', JSON.stringify(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`x${i}`, null]))))
    s9Error(missing, 'DATOS_REQUERIDOS')
    expect(missing.body.detalles.map((d: { campo: string }) => d.campo)).toEqual(['denunciante_nombre', 'tipo', 'fecha_hechos', 'lugar_hechos', 'descripcion'])
  })

  it('an array over its max_items is refused before its items are looked at', async () => {
    const res = await send('PUT', `/denuncias/${denuncia}`, JSON.stringify({ adjuntos: Array(201).fill('x') }))
    s9Error(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'adjuntos', mensaje: 'admite como máximo 200 elementos' }])
  })

  it('nesting deeper than 32 levels and more than 20,000 values are refused unparsed; 32 levels and 20,000 values are parsed', async () => {
    const deep = await send('PUT', `/atestados/${atestado}`, `{"diligencias":[${'{"a":'.repeat(31)}1${'}'.repeat(31)}]}`)
    s9Error(deep, 'DATOS_INVALIDOS')
    expect(deep.body.detalles).toEqual([{ campo: 'body', mensaje: 'admite como máximo 32 niveles de anidamiento' }])
    const limit = await send('PUT', `/atestados/${atestado}`, `{"diligencias":[${'{"a":'.repeat(30)}1${'}'.repeat(30)}]}`)
    expect(limit.body.detalles).toEqual([{ campo: 'diligencias', mensaje: 'admite como máximo 4 niveles de anidamiento' }])
    const many = await send('PUT', `/atestados/${atestado}`, JSON.stringify({ diligencias: [{ a: Array(20_001).fill(0) }] }))
    expect(many.body.detalles).toEqual([{ campo: 'body', mensaje: 'admite como máximo 20000 valores en total' }])
    const most = await send('PUT', `/atestados/${atestado}`, JSON.stringify({ diligencias: [{ a: Array(19_999).fill(0) }] }))
    expect(most.status, JSON.stringify(most.body)).toBe(200)
  })
})

describe('input rules', () => {
  it('invalid UTF-8 anywhere in a body is 400 JSON mal formado and writes nothing', async () => {
    const before = await state()
    const bad = [
      Buffer.from([...Buffer.from('{"descripcion":"caf'), 0xe9, ...Buffer.from('"}')]), // Latin-1 é
      Buffer.from([...Buffer.from('{"descripcion":"'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]), // an encoded surrogate
      Buffer.from([...Buffer.from('{"descripcion":"'), 0xc0, 0xaf, ...Buffer.from('"}')]), // an overlong form
      Buffer.from([...Buffer.from('{"descripcion":"ok"}'), 0xff]),
      Buffer.from([...Buffer.from('{"testigos":["'), 0xf0, 0x9f, 0x98, ...Buffer.from('"]}')]), // a truncated emoji
    ]
    for (const payload of bad) {
      for (const [method, url] of [['POST', '/denuncias'], ['PUT', `/denuncias/${denuncia}`]] as const) s9Error(await send(method, url, payload), 'JSON_MAL_FORMADO')
    }
    expect(await state()).toEqual(before)
    const good = await send('PUT', `/denuncias/${denuncia}`, Buffer.from('{"descripcion":"café 😀 ñ"}'))
    expect([good.status, good.body.data.descripcion]).toEqual([200, 'café 😀 ñ'])
  })

  it('a number a double cannot hold is 400 Datos inválidos naming its field, wherever it sits', async () => {
    const before = await state()
    const cases: Array<[string, string]> = [
      ['importe', '{"importe":1e400}'], ['importe', '{"importe":-1e400}'], ['puntos_carnet', '{"puntos_carnet":1E+999}'],
      ['importe', `{"importe":1${'0'.repeat(400)}}`], ['importe', '{"importe":1e-400}'], ['importe', `{"importe":0.${'0'.repeat(400)}1}`],
      ['importe_reducido', '{"importe":12.5,"importe_reducido":-1e400}'],
    ]
    for (const [campo, text] of cases) {
      const res = await send('PUT', `/sanciones/${refs.get('sanciones')!}`, text)
      s9Error(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles, text.slice(0, 60)).toEqual([{ campo, mensaje: 'contiene un número fuera del rango admitido' }])
    }
    for (const [campo, text] of [['testigos', '{"testigos":[1e400]}'], ['testigos', '{"testigos":["a",{"n":{"m":[-1e400]}}]}'], ['adjuntos', '{"adjuntos":[{"x":1e-999}]}'], ['body', '[1e400]'], ['body', '1e400']]) {
      const res = await send('PUT', `/denuncias/${denuncia}`, text)
      s9Error(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles, text).toEqual([{ campo, mensaje: 'contiene un número fuera del rango admitido' }])
    }
    const post = await send('POST', '/denuncias', JSON.stringify(sampleBody(mod('denuncias'), refs)).replace(/}$/, ',"testigos":[{"edad":1e400}]}'))
    s9Error(post, 'DATOS_INVALIDOS')
    expect(await state()).toEqual(before)
  })

  it('numbers that do fit are kept exactly as the double they are, in fields and array items', async () => {
    const items = [1e308, -1e308, 5e-324, 0.1, 123456789.123456789, 1e-7, 2 ** 53 + 2, { n: 1.7976931348623157e308 }]
    const res = await send('PUT', `/atestados/${atestado}`, JSON.stringify({ diligencias: items }))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.diligencias).toEqual(items)
    const back = await call(app, 'GET', `/atestados/${atestado}`, { token })
    expect(back.body.data.diligencias).toEqual(items)
    const san = await send('PUT', `/sanciones/${refs.get('sanciones')!}`, '{"importe":999999999999.99,"importe_reducido":1e-2}')
    expect([san.status, san.body.data.importe, san.body.data.importe_reducido]).toEqual([200, 999999999999.99, 0.01])
  })

  it('date-times and dates outside the years 1000-9999 are 400 naming the field, in bodies and in filters', async () => {
    const before = await state()
    const instants = ['0001-01-01T00:00:00Z', '0001-01-01 00:00:00', '0999-12-31 23:59:59', '1000-01-01T00:00:00Z', '1000-01-01T00:00:00+01:00',
      '9999-12-31T23:59:59-00:01', '0000-01-01 00:00:00']
    for (const v of instants) {
      const res = await send('PUT', `/denuncias/${denuncia}`, JSON.stringify({ fecha_hechos: v }))
      s9Error(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles.map((d: { campo: string }) => d.campo), v).toEqual(['fecha_hechos'])
      const filter = await send('GET', `/denuncias?fecha_hechos[gte]=${encodeURIComponent(v)}`)
      s9Error(filter, 'DATOS_INVALIDOS')
      expect(filter.body.detalles.map((d: { campo: string }) => d.campo), v).toEqual(['fecha_hechos[gte]'])
    }
    for (const v of ['0001-01-01', '0999-12-31', '0004-02-29', '0000-01-01']) {
      const res = await send('PUT', `/sanciones/${refs.get('sanciones')!}`, JSON.stringify({ fecha_notificacion: v }))
      s9Error(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles.map((d: { campo: string }) => d.campo), v).toEqual(['fecha_notificacion'])
      const personal = await send('PUT', `/personal/${refs.get('personal')!}`, JSON.stringify({ fecha_nacimiento: v }))
      s9Error(personal, 'DATOS_INVALIDOS')
      s9Error(await send('GET', `/sanciones?fecha_notificacion=${v}`), 'DATOS_INVALIDOS')
      s9Error(await send('GET', `/auditoria/lecturas?desde=${v}%2000:00:00`), 'DATOS_INVALIDOS')
    }
    expect(await state()).toEqual(before)
  })

  it('the first and last second of the range read back exactly as written', async () => {
    for (const v of ['1000-01-01 00:00:00', '1000-01-01 00:14:43', '1582-10-10 12:00:00', '9999-12-31 23:59:59']) {
      const res = await send('PUT', `/denuncias/${denuncia}`, JSON.stringify({ fecha_hechos: v }))
      expect([res.status, res.body.data?.fecha_hechos], v).toEqual([200, v])
      expect((await call(app, 'GET', `/denuncias/${denuncia}`, { token })).body.data.fecha_hechos).toBe(v)
      const found = await send('GET', `/denuncias?fecha_hechos=${encodeURIComponent(v)}`)
      expect(found.body.data.records.map((r: { _id: string }) => r._id), v).toContain(denuncia)
    }
    for (const v of ['1000-01-01', '1582-10-10', '9999-12-31']) {
      const res = await send('PUT', `/sanciones/${refs.get('sanciones')!}`, JSON.stringify({ fecha_notificacion: v }))
      expect([res.status, res.body.data?.fecha_notificacion], v).toEqual([200, v])
      const p = await send('PUT', `/personal/${refs.get('personal')!}`, JSON.stringify({ fecha_nacimiento: v }))
      expect([p.status, p.body.data?.fecha_nacimiento], v).toEqual([200, v])
    }
  })
})
