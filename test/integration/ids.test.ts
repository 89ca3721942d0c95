/**
 * Record ids (docs/user-guide.md "Records"): `PREFIX-YYYY-NNNNN` with the year in the service
 * time zone, successive numbers per prefix and year, unique across
 * instances under concurrency, never reused (after deletes, Redis flushes
 * and restarts) and drawn only after validation.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { client, login, type Res } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

const madridYear = (d = new Date()): number => Number(new Intl.DateTimeFormat('en', { timeZone: 'Europe/Madrid', year: 'numeric' }).format(d))
const YEAR = madridYear()
const CALL = { tipo_incidencia: 'normal', descripcion: 'x' }
const DENUNCIA = { denunciante_nombre: 'Ana Pérez', tipo: 'robo', fecha_hechos: '2026-03-01 10:00:00', lugar_hechos: 'Calle Mayor 1', descripcion: 'Robo con fuerza' }

let h: Harness
let appA: FastifyInstance
let appB: FastifyInstance
let token: string

beforeAll(async () => {
  ({ h, app: appA, token } = await startTestApp())
  appB = await h.app()
})
afterAll(async () => { await h.close() })

/** Prefix, year and sequence number of an id; fails the test when the shape is wrong. */
function parts (id: string): { prefix: string, year: number, n: number } {
  const m = /^([A-Z0-9]{3})-(\d{4})-(\d{5,})$/.exec(id)
  expect(m, `id ${id}`).not.toBeNull()
  return { prefix: m![1]!, year: Number(m![2]), n: Number(m![3]) }
}
const seq = (id: string): number => parts(id).n

async function created (res: Res | Promise<Res>): Promise<string> {
  const r = await res
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return r.body.data._id as string
}
const createCall = (app: FastifyInstance, body: Record<string, unknown> = CALL): Promise<string> => created(client(app, token).post('/sala092', body))

/** The highest stored sequence number of a prefix this year (deleted rows included). */
async function highest (table: string, prefix: string): Promise<number> {
  const rows = await h.db.query<{ _id: string }>(`select "_id" from "${table}" where "_id" like $1`, [`${prefix}-${YEAR}-%`])
  return Math.max(0, ...rows.map((r) => seq(r._id)))
}

/** Restart of the service and of Redis: stop both instances, forget every key, start two new ones. */
async function restart (): Promise<void> {
  await appA.close()
  await appB.close()
  await h.flushStores()
  appA = await h.app()
  appB = await h.app()
}

describe('shape', () => {
  it('is PREFIX-YYYY-NNNNN with the current year in Europe/Madrid', async () => {
    const call = await createCall(appA)
    expect(call).toMatch(new RegExp(`^092-${YEAR}-\\d{5}$`))
    const den = await created(client(appB, token).post('/denuncias', DENUNCIA))
    expect(den).toMatch(new RegExp(`^DEN-${YEAR}-\\d{5}$`))
    expect((await client(appA, token).get('/me')).body.data._id).toMatch(new RegExp(`^USR-${YEAR}-\\d{5}$`))
    const rows = await h.db.query('select "_id" from sala092 where "_id" = $1', [call])
    expect(rows).toEqual([{ _id: call }])
  })
})

describe('sequence', () => {
  it('successive creates get successive numbers, on either instance', async () => {
    const a = await createCall(appA)
    const b = await createCall(appB)
    const c = await createCall(appA)
    expect([seq(b), seq(c)]).toEqual([seq(a) + 1, seq(a) + 2])
    expect(seq(a)).toBe(await highest('sala092', '092') - 2)
  })

  it('each prefix has its own counter', async () => {
    const d1 = await created(client(appA, token).post('/denuncias', DENUNCIA))
    await createCall(appA)
    await createCall(appB)
    const d2 = await created(client(appB, token).post('/denuncias', DENUNCIA))
    expect(seq(d2)).toBe(seq(d1) + 1)
  })

  it('200 concurrent creates over two instances get 200 distinct, contiguous ids', async () => {
    const before = await highest('sala092', '092')
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => client(i % 2 === 0 ? appA : appB, token).post('/sala092', { ...CALL, descripcion: `llamada ${i}` })))
    const bad = results.filter((r) => r.status !== 201)
    expect(bad.map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([])
    const ids = results.map((r) => r.body.data._id as string)
    expect(new Set(ids).size).toBe(200)
    for (const id of ids) expect(parts(id)).toMatchObject({ prefix: '092', year: YEAR })
    const numbers = ids.map(seq).sort((x, y) => x - y)
    expect(numbers).toEqual(Array.from({ length: 200 }, (_, i) => before + 1 + i))
    const stored = await h.db.query<{ count: string }>('select count(distinct "_id") as count from sala092 where "_id" = any($1)', [ids])
    expect(Number(stored[0]!.count)).toBe(200)
  })
})

describe('drawn only after validation', () => {
  it('a failed create does not consume a number', async () => {
    const api = client(appA, token)
    const first = await createCall(appA)
    expectError(await api.post('/sala092', { ...CALL, tipo_incidencia: 'grave' }), 'DATOS_INVALIDOS')
    expectError(await api.post('/sala092', { tipo_incidencia: 'normal' }), 'DATOS_REQUERIDOS')
    expectError(await api.post('/sala092', { ...CALL, campo_inventado: 1 }), 'DATOS_INVALIDOS')
    expectError(await api.post('/sala092', { ...CALL, fecha_hora_entrada: '2026-03-29 02:30:00' }), 'DATOS_INVALIDOS')
    expectError(await api.post('/sala092', { ...CALL, descripcion: 42 }), 'DATOS_INVALIDOS')
    const consulta = await newUser(appA, token, 'consulta')
    expectError(await client(appB, consulta.token).post('/sala092', CALL), 'SIN_PERMISOS')
    expect(seq(await createCall(appB))).toBe(seq(first) + 1)
  })

  it('a create refused for a reference to a missing record does not consume a number', async () => {
    const api = client(appB, token)
    const first = await created(api.post('/denuncias', DENUNCIA))
    expectError(await api.post('/denuncias', { ...DENUNCIA, agente_asignado: `PER-${YEAR}-99999` }), 'DATOS_INVALIDOS')
    expect(seq(await created(api.post('/denuncias', DENUNCIA)))).toBe(seq(first) + 1)
  })
})

describe('never reused', () => {
  it('a deleted record keeps its number, also after a Redis flush', async () => {
    const api = client(appA, token)
    const victim = await createCall(appA)
    expect((await api.del(`/sala092/${victim}`)).status).toBe(200)
    const next = await createCall(appB)
    expect(seq(next)).toBe(seq(victim) + 1)
    expect((await api.del(`/sala092/${next}`)).status).toBe(200)
    await restart()
    const after = await createCall(appA)
    expect(seq(after)).toBe(seq(next) + 1)
    expect(await h.db.query('select "_id" from sala092 where "_id" = any($1)', [[victim, next]])).toHaveLength(2)
  })

  it('after a flush the counters continue after the highest stored id, under concurrency', async () => {
    const top = await highest('sala092', '092')
    const topDen = await highest('denuncias', 'DEN')
    await restart()
    const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => createCall(i % 2 === 0 ? appA : appB)))
    expect(ids.map(seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => top + 1 + i))
    expect(seq(await created(client(appB, token).post('/denuncias', DENUNCIA)))).toBe(topDen + 1)
  })

  it('the sequence widens past 99999 instead of failing', async () => {
    const top = await highest('sala092', '092')
    await h.db.query('update sala092 set "_id" = $1 where "_id" = $2', [`092-${YEAR}-99999`, `092-${YEAR}-${String(top).padStart(5, '0')}`])
    await restart()
    expect(await createCall(appA)).toBe(`092-${YEAR}-100000`)
    expect(await createCall(appB)).toBe(`092-${YEAR}-100001`)
  })
})

describe('year in the service time zone', () => {
  it('takes the Madrid year at New Year and starts each year at 00001', async () => {
    const y = YEAR + 1
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(new Date(`${y}-12-31T22:59:58Z`)) // 23:59:58 in Madrid
      const before = client(appA, await login(appA))
      expect(await created(before.post('/sala092', CALL))).toBe(`092-${y}-00001`)
      expect(await created(before.post('/sala092', CALL))).toBe(`092-${y}-00002`)
      vi.setSystemTime(new Date(`${y}-12-31T23:00:01Z`)) // 00:00:01 on 1 January in Madrid, still December in UTC
      expect(madridYear()).toBe(y + 1)
      const after = client(appA, await login(appA))
      expect(await created(after.post('/sala092', CALL))).toBe(`092-${y + 1}-00001`)
      expect(await created(after.post('/denuncias', DENUNCIA))).toBe(`DEN-${y + 1}-00001`)
    } finally {
      vi.useRealTimers()
    }
    expect(parts(await createCall(appA)).year).toBe(YEAR)
  })
})
