/**
 * The document's date, time and date-time patterns take exactly what the
 * service takes, where a pattern can say it (docs/user-guide.md "The
 * document is the contract"): no month 00 or 13, no day 00 or 32, no 31
 * April or 30 February, 29 February of a leap year only, no year 0000; a
 * local time in the spring gap, which no pattern can tell, is named in the
 * date-time's description. Each value is put to the pattern read from GET
 * /docs/json and to the service through HTTP (a list filter, the read
 * log's `desde`): the two verdicts must agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/app.js'
import type { Api } from '../helpers/http.js'
import { startTestApp } from '../helpers/test-app.js'

type Schema = Record<string, any>
let h: Harness
let admin: Api
let doc: Schema

beforeAll(async () => {
  let app
  ({ h, app, admin } = await startTestApp())
  doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
})
afterAll(async () => { await h?.close() })

/** The schema of a query parameter of GET `path` (an array's items: one value). */
function parameter (path: string, name: string): Schema {
  const p = (doc.paths[path].get.parameters as Schema[]).find((x) => x.in === 'query' && x.name === name)
  expect(p, `${path} ?${name}`).toBeDefined()
  // @fastify/swagger moves a parameter's description beside its schema.
  return { ...(p!.schema.type === 'array' ? p!.schema.items : p!.schema), description: p!.description }
}

const DATES = ['2026-06-01', '1000-01-01', '9999-12-31', '2024-02-29', '2000-02-29', '2026-04-30', '2026-12-31',
  '0000-00-00', '0000-01-01', '0999-12-31', '2026-00-10', '2026-13-01', '2026-01-00', '2026-01-32', '2026-04-31', '2026-06-31',
  '2026-02-30', '2026-02-29', '1900-02-29', '2100-02-29', '2026-6-01', '26-06-01']
const TIMES = ['00:00', '23:59', '10:30', '24:00', '23:60', '9:30', '10:30:00']
const DATETIMES = ['2026-06-01 10:30:00', '2026-06-01T10:30:00+02:00', '2026-06-01T08:30Z', '2024-02-29 23:59:59', '2026-06-01T10:30:00.5-05:00',
  '0000-00-00 00:00:00', '2026-13-01 10:00:00', '2026-02-30 10:00:00', '2026-04-31T10:00:00Z', '2026-06-01 24:00:00', '2026-06-01 10:60:00',
  '2026-06-01 10:00:60', '2026-06-01T10:00+24:00', '2026-06-01T10:00+02:60', '2026-06-01T10:30:00', '2026-06-01 10:30']

const verdicts = async (values: string[], pattern: string, ask: (v: string) => Promise<number>): Promise<Array<[string, boolean, number]>> => {
  const re = new RegExp(pattern)
  const out: Array<[string, boolean, number]> = []
  for (const v of values) out.push([v, re.test(v), await ask(v)])
  return out
}
/** Each value's pattern verdict beside the service's: 200 where the pattern takes it, 400 where it does not. */
const expectAgreement = (got: Array<[string, boolean, number]>): void => {
  expect(got.map(([v, taken, status]) => [v, taken ? 200 : 400, status])).toEqual(got.map(([v, taken]) => [v, taken ? 200 : 400, taken ? 200 : 400]))
}

describe('date, time and date-time patterns agree with the service', () => {
  it('a date: its filter refuses what the pattern refuses, and takes what it takes', async () => {
    const schema = parameter('/sanciones', 'fecha_notificacion')
    const got = await verdicts(DATES, schema.pattern, async (v) => (await admin.get(`/sanciones?fecha_notificacion=${v}`)).status)
    expectAgreement(got)
    expect(got.filter(([, taken]) => !taken).map(([v]) => v)).toEqual(expect.arrayContaining(['0000-00-00', '2026-13-01', '2026-01-32', '2026-02-30', '2026-02-29']))
    // A body's date and a record's are written by the same calendar.
    const body = doc.paths['/sanciones'].post.requestBody.content['application/json'].schema.properties.fecha_notificacion
    expect(body.pattern).toBe(schema.pattern)
    expect(doc.components.schemas.sancionesRecord.properties.fecha_notificacion.pattern).toBe(schema.pattern)
  })

  it('a time', async () => {
    const schema = parameter('/turnos', 'hora_inicio')
    expectAgreement(await verdicts(TIMES, schema.pattern, async (v) => (await admin.get(`/turnos?hora_inicio=${v}`)).status))
  })

  it('a date-time filter and the read log\'s desde and hasta; the spring gap is named where the pattern cannot say it', async () => {
    const filter = parameter('/denuncias', 'fecha_hechos[gte]')
    expectAgreement(await verdicts(DATETIMES, filter.pattern, async (v) => (await admin.get(`/denuncias?fecha_hechos[gte]=${encodeURIComponent(v)}`)).status))
    for (const name of ['desde', 'hasta']) {
      const schema = parameter('/auditoria/lecturas', name)
      expect(schema.pattern, name).toBe(filter.pattern)
      expect(schema.description, name).toContain('ISO 8601')
      expectAgreement(await verdicts(DATETIMES, schema.pattern, async (v) => (await admin.get(`/auditoria/lecturas?${name}=${encodeURIComponent(v)}`)).status))
    }
    // 02:30 on the last Sunday of March does not exist in Madrid: the pattern takes it, the service does not, the description says so.
    const gap = '2026-03-29 02:30:00'
    expect(new RegExp(filter.pattern).test(gap)).toBe(true)
    expect((await admin.get(`/denuncias?fecha_hechos[gte]=${encodeURIComponent(gap)}`)).status).toBe(400)
    const body = doc.paths['/denuncias'].post.requestBody.content['application/json'].schema.properties.fecha_hechos
    expect(body.pattern).toBe(filter.pattern)
    expect(body.description).toContain('horario de verano')
  })
})
