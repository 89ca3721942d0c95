/**
 * Probing for a person leaves a trace (docs/operator-guide.md "Read log"): a list
 * filtered on an encrypted field writes one read-log entry of kind
 * `busqueda` — user, time, module, the encrypted fields, the number of
 * matches — never the value searched for, also for an empty page and for
 * no match; lists without such a filter write none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/app.js'
import { ok, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>

let h: Harness, admin: Api
let adminId: string

const DNI = '48151623L'

/** A complaint with the required fields; `set` overrides any. */
async function denuncia (set: Record<string, unknown>): Promise<string> {
  return ok(await admin.post('/denuncias', {
    denunciante_nombre: 'Nombre Apellido', tipo: 'otro', fecha_hechos: '2026-03-15 10:30:00', lugar_hechos: 'Sin datos', descripcion: 'Sin datos', ...set,
  }), 201)._id as string
}

/** The newest `busqueda` entries through the API, newest first. */
const searches = async (qs = ''): Promise<Rec[]> => ok(await admin.get(`/auditoria/lecturas?tipo=busqueda&usuario=${adminId}${qs}`)).records
const stored = async (): Promise<Rec[]> => h.db.query("select * from sys_lecturas where tipo = 'busqueda' order by id desc")

beforeAll(async () => {
  ({ h, admin } = await startTestApp())
  adminId = ok(await admin.get('/me'))._id
  await denuncia({ denunciante_dni: DNI })
  await denuncia({ denunciante_dni: DNI.toLowerCase() })
  await denuncia({ denunciante_dni: null })
})
afterAll(async () => { await h.close() })

describe('busqueda entries', () => {
  it('a filter on a searchable encrypted field logs user, module, field and the number of matches, never the value', async () => {
    const before = (await stored()).length
    const page = ok(await admin.get(`/denuncias?denunciante_dni=${DNI}&limit=1`))
    expect(page.total).toBe(2)
    const [entry] = await searches()
    expect(entry).toEqual({ tipo: 'busqueda', usuario: adminId, fecha: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/), modulo: 'denuncias', registro: null, campos: ['denunciante_dni'], ruta: expect.stringMatching(/^GET \/denuncias\/?$/), coincidencias: 2 })
    const rows = await stored()
    expect(rows.length).toBe(before + 1)
    // Neither the value nor its blind index anywhere in the entry (API and table).
    const bidx = (await h.db.query('select denunciante_dni_bidx as b from denuncias where denunciante_dni_bidx is not null limit 1'))[0]!.b as string
    for (const text of [JSON.stringify(entry), JSON.stringify(rows[0]!)]) {
      expect(text).not.toContain(DNI)
      expect(text.toLowerCase()).not.toContain(DNI.toLowerCase())
      expect(text).not.toContain(bidx)
    }
    expect(rows[0]).toMatchObject({ tipo: 'busqueda', usuario: adminId, modulo: 'denuncias', registro: '', campos: ['denunciante_dni'], coincidencias: 2 })
  })

  it('also an empty page (offset past the end) and a search with no match', async () => {
    const page = ok(await admin.get(`/denuncias?denunciante_dni=${DNI}&offset=100000`))
    expect(page.records).toEqual([])
    expect((await searches())[0]).toMatchObject({ campos: ['denunciante_dni'], coincidencias: 2 })
    expect(ok(await admin.get('/denuncias?denunciante_dni=00000000T')).total).toBe(0)
    expect((await searches())[0]).toMatchObject({ campos: ['denunciante_dni'], coincidencias: 0 })
  })

  it('[vacio], [in] and several encrypted fields: one entry naming each field once', async () => {
    const empty = ok(await admin.get('/denuncias?denunciante_dni[vacio]=true')).total
    expect((await searches())[0]).toMatchObject({ campos: ['denunciante_dni'], coincidencias: empty })
    ok(await admin.get(`/denuncias?denunciante_dni[in]=${DNI},00000000T&denunciante_dni[vacio]=false&tipo=otro`))
    expect((await searches())[0]).toMatchObject({ campos: ['denunciante_dni'], coincidencias: 2 })
    ok(await admin.get(`/sanciones?infractor_dni=${DNI}`))
    expect((await searches())[0]).toMatchObject({ modulo: 'sanciones', campos: ['infractor_dni'], coincidencias: 0 })
    expect(ok(await admin.get('/auditoria/lecturas?tipo=busqueda&modulo=sanciones')).total).toBeGreaterThanOrEqual(1)
  })

  it('lists without a filter on an encrypted field log no busqueda; a refused list logs nothing', async () => {
    const before = (await stored()).length
    ok(await admin.get('/denuncias?tipo=otro'))
    ok(await admin.get('/denuncias'))
    expectError(await admin.get('/denuncias?denunciante_dni=1&limit=0'), 'DATOS_INVALIDOS')
    expect((await stored()).length).toBe(before)
  })

  it('lectura entries say their kind; tipo filters and is checked', async () => {
    ok(await admin.get('/denuncias?tipo=otro'))
    const lecturas = ok(await admin.get('/auditoria/lecturas?tipo=lectura')).records as Rec[]
    expect(lecturas.length).toBeGreaterThan(0)
    for (const r of lecturas) {
      expect(r.tipo).toBe('lectura')
      expect(typeof r.registro).toBe('string')
      expect(r).not.toHaveProperty('coincidencias')
    }
    expectError(await admin.get('/auditoria/lecturas?tipo=otra'), 'DATOS_INVALIDOS')
  })
})
