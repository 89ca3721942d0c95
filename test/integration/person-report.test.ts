/**
 * The data-protection officer's person report (docs/user-guide.md
 * "Personal data"): GET /proteccion-datos/interesado/documento as a person
 * reads it (pdftotext): the title, the DNI, who printed it, each record
 * found by its module's label and id, "Eliminado" for a deleted one, where
 * it holds the DNI by the fields' labels, its reads; the search logged once
 * as `interesado` without the DNI, as the JSON search is; the refusals in
 * the usual envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { client, ok } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { expectError } from '../helpers/errors.js'
import { pdfInfo, pdfStructure, pdfText } from '../helpers/pdf.js'

const PERSON = '11111111H'
const base = { tipo: 'hurto', fecha_hechos: '2026-03-01 10:30:00', lugar_hechos: 'Calle Mayor', descripcion: 'Cartera' }

let t: TestApp
let dpo: { id: string, username: string, token: string }
let consulta: { token: string }

async function report (app: FastifyInstance, dni: string, token: string): Promise<{ status: number, type: string, disposition: string, pdf: Buffer, json: () => any }> {
  const res = await app.inject({ method: 'GET', url: `/proteccion-datos/interesado/documento?dni=${encodeURIComponent(dni)}`, headers: { authorization: `Bearer ${token}` } })
  return { status: res.statusCode, type: String(res.headers['content-type']), disposition: String(res.headers['content-disposition']), pdf: res.rawPayload, json: () => res.json() }
}

beforeAll(async () => {
  t = await startTestApp({ env: { FORCE_NAME: 'Policía Local de Villanueva del Ñandú' } })
  dpo = await newUser(t.app, t.token, 'delegado_proteccion_datos')
  consulta = await newUser(t.app, t.token, 'consulta')
})
afterAll(async () => { await t?.h.close() })

describe("a person's data, printed", () => {
  it('lists every record holding the DNI by module and id, deleted ones marked, where and who read each; logged once without the DNI', async () => {
    const complainant = ok(await t.admin.post('/denuncias', { ...base, denunciante_nombre: 'Persona Buscada', denunciante_dni: PERSON }), 201)._id as string
    const witness = ok(await t.admin.post('/denuncias', { ...base, denunciante_nombre: 'Otra', denunciante_dni: '22222222J', testigos: [{ nombre: 'Alguien', dni: '33333333P' }, { nombre: 'Persona Buscada', dni: PERSON }] }), 201)._id as string
    const sancion = ok(await t.admin.post('/sanciones', { tipo: 'trafico', infractor_nombre: 'Persona Buscada', infractor_dni: PERSON, fecha_infraccion: '2026-03-02 09:00:00', lugar_infraccion: 'Avenida', importe: 90 }), 201)._id as string
    const elsewhere = ok(await t.admin.post('/denuncias', { ...base, denunciante_nombre: 'Nadie', denunciante_dni: '44444444A' }), 201)._id as string
    expect((await t.app.inject({ method: 'GET', url: `/denuncias/${complainant}/documento`, headers: { authorization: `Bearer ${t.token}` } })).statusCode).toBe(200)
    ok(await t.admin.del(`/sanciones/${sancion}`))

    // Typed as a person would: lower case, spaces around.
    const res = await report(t.app, ` ${PERSON.toLowerCase()} `, dpo.token)
    expect(res.status, res.pdf.toString()).toBe(200)
    expect(res.type).toBe('application/pdf')
    expect(res.disposition).toMatch(/^attachment; filename="interesado-\d{4}-\d{2}-\d{2}\.pdf"; filename\*=UTF-8''interesado-\d{4}-\d{2}-\d{2}\.pdf$/)
    expect(res.pdf.subarray(0, 5).toString()).toBe('%PDF-')
    const info = pdfInfo(res.pdf)
    expect(info.Tagged).toBe('yes')
    expect(info.Title).toBe('Datos personales de un interesado')
    const structure = pdfStructure(res.pdf).split('\n').map((l) => l.trim().split(/[ :]/)[0])
    for (const element of ['Document', 'H1', 'H2', 'P', 'Table', 'TR', 'TH', 'TD']) expect(structure).toContain(element)

    const flat = pdfText(res.pdf).replace(/\s+/g, ' ')
    for (const expected of ['Policía Local de Villanueva del Ñandú', 'Datos personales de un interesado', `DNI o NIE buscado: ${PERSON}`, `por ${dpo.username}`,
      '3 registros guardan este DNI.', `Denuncias ${complainant}`, `Denuncias ${witness}`, `Sanciones ${sancion}`,
      'Guarda el DNI en: DNI del denunciante', 'Guarda el DNI en: Testigos › DNI', 'Guarda el DNI en: DNI del infractor',
      'Fecha Usuario Tipo', 'Lectura de datos cifrados', 'Copia impresa', 'Página 1 de ']) {
      expect(flat).toContain(expected)
    }
    expect(flat).not.toContain(elsewhere)
    // "Eliminado" only under the deleted sanción.
    expect(flat.match(/Eliminado/g)).toHaveLength(1)
    expect(flat.indexOf('Eliminado')).toBeGreaterThan(flat.indexOf(`Sanciones ${sancion}`))
    expect(flat).not.toContain('no se pueden buscar')

    const logged = ok(await client(t.app, dpo.token).get(`/auditoria/lecturas?tipo=interesado&usuario=${dpo.id}`))
    expect(logged.total).toBe(1)
    expect(logged.records[0]).toMatchObject({ tipo: 'interesado', usuario: dpo.id, registro: null, coincidencias: 3, campos: ['denuncias', 'sanciones'], ruta: 'GET /proteccion-datos/interesado/documento' })
    expect(JSON.stringify(logged.records[0])).not.toContain(PERSON)
    const rows = await t.h.db.query("select count(*)::int as n from sys_lecturas where tipo = 'interesado' and (ruta like $1 or filtro like $1 or campos::text like $1)", [`%${PERSON}%`])
    expect(rows).toEqual([{ n: 0 }])
  })

  it('prints a search that finds nothing as such', async () => {
    const res = await report(t.app, '99999999R', dpo.token)
    expect(res.status).toBe(200)
    const flat = pdfText(res.pdf).replace(/\s+/g, ' ')
    expect(flat).toContain('Ningún registro guarda este DNI.')
    expect(flat).toContain('DNI o NIE buscado: 99999999R')
  })

  it('refuses other roles (403) and a text that is no DNI (400), in the usual envelope, logging nothing', async () => {
    const before = ok(await client(t.app, dpo.token).get('/auditoria/lecturas?tipo=interesado')).total as number
    for (const token of [t.token, consulta.token]) {
      const refused = await report(t.app, PERSON, token)
      expectError({ status: refused.status, body: refused.json() }, 'SIN_PERMISOS')
    }
    const bad = await report(t.app, '12345678A', dpo.token)
    expect(bad.status).toBe(400)
    expectError({ status: bad.status, body: bad.json() }, 'DATOS_INVALIDOS')
    expect(bad.json().detalles).toEqual([{ campo: 'dni', mensaje: expect.stringContaining('DNI o NIE') }])
    expect((await t.app.inject({ method: 'GET', url: '/proteccion-datos/interesado/documento', headers: { authorization: `Bearer ${dpo.token}` } })).statusCode).toBe(400)
    expect(ok(await client(t.app, dpo.token).get('/auditoria/lecturas?tipo=interesado')).total).toBe(before)
  })
})
