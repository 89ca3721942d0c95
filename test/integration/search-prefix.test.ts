/**
 * `q` as people type (docs/user-guide.md "Search"), over HTTP on the shipped
 * modules.yaml: each word matches the start of a word (`Cervan` finds
 * `Cervantes`, not `cerveza`), accents and case aside both ways, numbers as
 * prefixes (an officer's TIP, a number after a hyphen), every word must
 * match, stop words, relevance, characters of the query syntax, and
 * row-level scope. The reference picker of the console asks the same list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { client, ok, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>

let h: Harness, app: FastifyInstance, admin: Api, adminToken: string
const den = {} as Record<'cervantes' | 'cerveza' | 'luciaAccent' | 'luciaPlain' | 'agente' | 'nave' | 'movil', string>
let officer: string

/** The ids `q` finds in `path` (limit 1000), sorted, after checking its total. */
async function find (q: string, api: Api = admin, path = '/denuncias'): Promise<string[]> {
  const data = ok(await api.get(`${path}?q=${encodeURIComponent(q)}&limit=1000`))
  const ids = (data.records as Rec[]).map((r) => r._id as string)
  expect(data.total, q).toBe(ids.length)
  return ids.sort()
}
const ids = (...keys: Array<keyof typeof den>): string[] => keys.map((k) => den[k]).sort()

async function denuncia (set: Record<string, unknown>, api = admin): Promise<string> {
  return ok(await api.post('/denuncias', {
    denunciante_nombre: 'Nombre Apellido', tipo: 'otro', fecha_hechos: '2026-03-15 10:30:00', lugar_hechos: 'Sin datos', descripcion: 'Sin datos', ...set,
  }), 201)._id as string
}

beforeAll(async () => {
  ({ h, app, token: adminToken, admin } = await startTestApp())
  den.cervantes = await denuncia({ denunciante_nombre: 'Miguel de Cervantes', descripcion: 'Extravío de documentación' })
  den.cerveza = await denuncia({ denunciante_nombre: 'Bar La Cervecería', descripcion: 'Rotura de cristales con una botella de cerveza' })
  den.luciaAccent = await denuncia({ denunciante_nombre: 'Lucía Ortega', descripcion: 'Daños en el portal' })
  den.luciaPlain = await denuncia({ denunciante_nombre: 'Lucia Ortiz', descripcion: 'Daños en el garaje' })
  den.agente = await denuncia({ descripcion: 'Intervino el agente con número profesional 90001' })
  den.nave = await denuncia({ lugar_hechos: 'Nave 77-3145 del polígono' })
  den.movil = await denuncia({ descripcion: 'Hurto de un móvil', lugar_hechos: 'Plaza de España' })
  officer = ok(await admin.post('/personal', { tip: '90001', nif: '12345678Z', nombre: 'Lucía', apellidos: 'Cervantes Núñez', escala: 'oficial' }), 201)._id
  ok(await admin.post('/personal', { tip: '80001', nif: '87654321X', nombre: 'Luis', apellidos: 'Sanz', escala: 'oficial' }), 201)
})
afterAll(async () => { await h.close() })

describe('q matches the start of a word', () => {
  it('a prefix finds the words it starts, and no word it does not start', async () => {
    expect(await find('Cervan')).toEqual(ids('cervantes'))
    expect(await find('cerv')).toEqual(ids('cervantes', 'cerveza'))
    expect(await find('cerveceria')).toEqual(ids('cerveza'))
    expect(await find('ervantes')).toEqual([]) // the start of a word, not a substring (that is contiene)
    expect(await find('documentacion')).toEqual(ids('cervantes')) // a whole word still matches
  })

  it('accents and case aside, both ways', async () => {
    expect(await find('Luc')).toEqual(ids('luciaAccent', 'luciaPlain'))
    expect(await find('lucia')).toEqual(ids('luciaAccent', 'luciaPlain'))
    expect(await find('LUCÍ')).toEqual(ids('luciaAccent', 'luciaPlain'))
    expect(await find('Lucía')).toEqual(ids('luciaAccent', 'luciaPlain'))
    expect(await find('extravi')).toEqual(ids('cervantes'))
  })

  it('every word must match, each as a prefix', async () => {
    expect(await find('lucia orte')).toEqual(ids('luciaAccent'))
    expect(await find('ort luc')).toEqual(ids('luciaAccent', 'luciaPlain'))
    expect(await find('cerv migu')).toEqual(ids('cervantes'))
    expect(await find('cerv botel')).toEqual(ids('cerveza'))
    expect(await find('lucia cerv')).toEqual([])
  })

  it('numbers are prefixes too, also after a hyphen', async () => {
    expect(await find('9000')).toEqual(ids('agente'))
    expect(await find('90001')).toEqual(ids('agente'))
    expect(await find('900012')).toEqual([])
    expect(await find('314')).toEqual(ids('nave')) // 77-3145
    expect(await find('77-31')).toEqual(ids('nave'))
  })

  it('an officer by the start of their TIP or name: the list the reference picker asks', async () => {
    const pick = async (q: string): Promise<string[]> => find(q, admin, '/personal')
    expect(await pick('9000')).toEqual([officer])
    expect(await pick('cervantes luc')).toEqual([officer])
    expect(await pick('nu')).toEqual([officer])
    const picker = ok(await admin.get(`/personal?${new URLSearchParams({ q: 'Cervan', limit: '8', campos: 'tip,nombre,apellidos' }).toString()}`))
    expect(picker.records.map((r: Rec) => r._id)).toEqual([officer])
  })

  it('Spanish stems still join forms of a word; stop words count only as the last word', async () => {
    expect(await find('garajes')).toEqual(ids('luciaPlain')) // the stem (garaj), not a prefix
    expect(await find('hurto del movil')).toEqual(ids('movil')) // "del" is ignored (the record says "de")
    expect(await find('hurto de')).toEqual(ids('movil')) // the last word may be the start of one: "de"
    const ladron = await denuncia({ descripcion: 'Un ladrón huye' })
    expect(await find('la')).toContain(ladron)
    expect(await find('la')).toContain(den.cerveza) // "La Cervecería"
  })

  it('with no sort, the best matches first', async () => {
    const strong = await denuncia({ descripcion: 'Furgoneta robada: la furgoneta blanca, una furgoneta de reparto', lugar_hechos: 'Furgoneta' })
    const weak = await denuncia({ descripcion: 'Aparece una furgoneta' })
    const first = ok(await admin.get('/denuncias?q=furgon&limit=2')).records.map((r: Rec) => r._id)
    expect(first[0]).toBe(strong)
    expect(first).toContain(weak)
  })
})

describe('characters of the query syntax', () => {
  it('are separators: the words around them are searched, never a 500', async () => {
    for (const q of ['Cervan&', 'cervan:*', '!cervan', '(cervan)', 'cervan|', "cervan'", '<->cervan', 'cervan\\', '"cervan"', "cervan' | 'extrav"]) {
      expect(await find(q), q).toEqual(ids('cervantes'))
    }
    for (const q of ["o'brien", 'a:*|b', '&&||!!', "' or 1=1 --", 'x)(y', ':*', '\\\\x']) {
      const res = await admin.get(`/denuncias?q=${encodeURIComponent(q)}`)
      if (/[\p{L}\p{N}]/u.test(q)) expect(res.status, q).toBe(200)
      else expectError(res, 'DATOS_INVALIDOS') // no letter or digit: the S9 envelope
    }
    expect(await find("migu'el")).toEqual([]) // two words: "migu" and "el"
  })
})

describe('row-level scope', () => {
  it('an agente finds by prefix only own records', async () => {
    const p = ok(await admin.post('/personal', { tip: 'TIP-2', nif: '11111111H', nombre: 'Eva', apellidos: 'Ruiz', escala: 'oficial' }), 201)._id
    const agente = await newUser(app, adminToken, 'agente')
    ok(await admin.put(`/usuarios/${agente.id}`, { personal_id: p }))
    const api = client(app, agente.token)
    const mine = await denuncia({ descripcion: 'Motocicleta sustraída en el aparcamiento', agente_asignado: p })
    const other = await denuncia({ descripcion: 'Motocicleta sustraída en la gasolinera' })
    expect(await find('motoc sustra')).toEqual([mine, other].sort())
    expect(await find('motoc sustra', api)).toEqual([mine])
    expect(await find('gasol', api)).toEqual([])
    expect(await find('cerv', api)).toEqual([])
  })
})
