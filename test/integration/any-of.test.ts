/**
 * Any-of groups (docs/user-guide.md "Any-of filters (o[N])") through HTTP on the
 * shipped modules.yaml: `o[N][campo][op]=valor` conditions ORed within a
 * group, groups ANDed with each other, with the plain filters and with `q`;
 * results and totals exact against an in-memory evaluation of the same
 * fixtures (also as a property over random groups); row-level scope inside
 * groups; an encrypted field in a group needs `descifrar` and leaves a
 * `busqueda` read-log entry; every malformed group a 400 naming the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { client, ok, validDni, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { listFilters } from '../../records/list-query.js'

/** A fixture complaint: what it is stored with. */
interface Fix {
  id: string
  estado: string
  prioridad: string
  tipo: string
  fecha_hechos: string
  descripcion: string
  observaciones: string | null
  testigos: Array<{ nombre: string }> | null
  denunciante_dni: string | null
  mine: boolean
}

const PLACE = 'Lugar de las pruebas any-of'
const DNI = validDni(48151623)

let h: Harness, app: FastifyInstance, admin: Api, adminToken: string, adminId: string
let staffId: string
const F: Fix[] = []

const ROWS: Array<Omit<Fix, 'id'>> = [
  { estado: 'pendiente', prioridad: 'alta', tipo: 'robo', fecha_hechos: '2026-01-10 10:00:00', descripcion: 'Robo de una bicicleta roja', observaciones: null, testigos: [{ nombre: 'Luis' }], denunciante_dni: DNI, mine: true },
  { estado: 'pendiente', prioridad: 'media', tipo: 'hurto', fecha_hechos: '2026-02-11 11:00:00', descripcion: 'Hurto de un móvil en el Camión', observaciones: '', testigos: [], denunciante_dni: null, mine: false },
  { estado: 'archivada', prioridad: 'urgente', tipo: 'robo', fecha_hechos: '2026-03-12 12:00:00', descripcion: 'Robos reiterados de camiones', observaciones: 'Revisar', testigos: null, denunciante_dni: validDni(11111111), mine: true },
  { estado: 'archivada', prioridad: 'baja', tipo: 'lesiones', fecha_hechos: '2026-04-13 13:00:00', descripcion: 'Pelea en la plaza', observaciones: null, testigos: [{ nombre: 'Ana' }, { nombre: 'Eva' }], denunciante_dni: DNI, mine: false },
  { estado: 'pendiente', prioridad: 'urgente', tipo: 'daños', fecha_hechos: '2026-05-14 14:00:00', descripcion: 'Daños en un escaparate', observaciones: 'Cámara', testigos: null, denunciante_dni: '', mine: false },
  { estado: 'archivada', prioridad: 'media', tipo: 'hurto', fecha_hechos: '2026-06-15 15:00:00', descripcion: 'Cartera sustraída en la bicicleta', observaciones: null, testigos: null, denunciante_dni: null, mine: true },
  { estado: 'pendiente', prioridad: 'baja', tipo: 'robo', fecha_hechos: '2026-07-16 16:00:00', descripcion: 'Robo frustrado', observaciones: 'Nada', testigos: [{ nombre: 'Pepe' }], denunciante_dni: validDni(22222222), mine: false },
]

const qs = (...pairs: Array<[string, string]>): string => pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')
const sorted = (a: string[]): string[] => [...a].sort()

/** Ids and total of a list of complaints (every page; limit 1000). */
async function found (api: Api, query: string): Promise<{ ids: string[], total: number }> {
  const data = ok(await api.get(`/denuncias?${query}&limit=1000`))
  return { ids: sorted((data.records as Array<{ _id: string }>).map((r) => r._id)), total: data.total }
}

/** What a query must find: the fixtures `keep` accepts. */
function expected (keep: (r: Fix) => boolean, among: Fix[] = F): { ids: string[], total: number } {
  const ids = among.filter(keep).map((r) => r.id)
  return { ids: sorted(ids), total: ids.length }
}

const fold = (s: string): string => s.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase()
const empty = (v: string | unknown[] | null): boolean => v === null || v.length === 0

beforeAll(async () => {
  ({ h, app, token: adminToken, admin } = await startTestApp())
  adminId = ok(await admin.get('/me'))._id
  staffId = ok(await admin.post('/personal', { tip: 'TIP-ANY', nif: validDni(33333333), nombre: 'Ana', apellidos: 'Pérez', escala: 'oficial' }), 201)._id
  for (const r of ROWS) {
    const body = { denunciante_nombre: 'Nombre Apellido', lugar_hechos: PLACE, tipo: r.tipo, fecha_hechos: r.fecha_hechos, descripcion: r.descripcion, prioridad: r.prioridad, estado: r.estado, observaciones: r.observaciones, testigos: r.testigos, denunciante_dni: r.denunciante_dni, agente_asignado: r.mine ? staffId : null }
    F.push({ ...r, id: ok(await admin.post('/denuncias', body), 201)._id as string })
  }
})
afterAll(async () => { await h.close() })

describe('one group: any of its conditions', () => {
  it.each<[string, string, (r: Fix) => boolean]>([
    ['eq or in (the spec\'s example)', qs(['o[1][estado]', 'pendiente'], ['o[1][prioridad][in]', 'alta,urgente']),
      (r) => r.estado === 'pendiente' || ['alta', 'urgente'].includes(r.prioridad)],
    ['ne or eq', qs(['o[1][prioridad][ne]', 'media'], ['o[1][tipo]', 'hurto']), (r) => r.prioridad !== 'media' || r.tipo === 'hurto'],
    ['gt or lte on a date-time, or eq', qs(['o[1][fecha_hechos][gt]', '2026-06-01 00:00:00'], ['o[1][fecha_hechos][lte]', '2026-01-31 00:00:00'], ['o[1][estado]', 'archivada']),
      (r) => r.fecha_hechos > '2026-06-01 00:00:00' || r.fecha_hechos <= '2026-01-31 00:00:00' || r.estado === 'archivada'],
    ['contiene on text (accents, case) or eq', qs(['o[1][descripcion][contiene]', 'CAMION'], ['o[1][prioridad]', 'baja']),
      (r) => fold(r.descripcion).includes('camion') || r.prioridad === 'baja'],
    ['contiene on an enum or vacio on text', qs(['o[1][prioridad][contiene]', 'GEN'], ['o[1][observaciones][vacio]', 'false']),
      (r) => r.prioridad === 'urgente' || !empty(r.observaciones)],
    ['vacio on an array or on text', qs(['o[1][testigos][vacio]', 'false'], ['o[1][observaciones][vacio]', 'true']),
      (r) => !empty(r.testigos) || empty(r.observaciones)],
    ['a repeated equality', qs(['o[1][tipo]', 'lesiones'], ['o[1][tipo]', 'daños'], ['o[1][estado]', 'archivada']),
      (r) => ['lesiones', 'daños'].includes(r.tipo) || r.estado === 'archivada'],
    ['a single condition', qs(['o[1][tipo]', 'robo']), (r) => r.tipo === 'robo'],
  ])('%s', async (_what, query, keep) => {
    expect(await found(admin, query)).toEqual(expected(keep))
  })
})

describe('groups are ANDed with each other, the plain filters and q', () => {
  it('two groups and plain filters', async () => {
    const query = qs(['lugar_hechos', PLACE], ['tipo[ne]', 'lesiones'],
      ['o[1][estado]', 'pendiente'], ['o[1][prioridad]', 'urgente'],
      ['o[2][descripcion][contiene]', 'bicicleta'], ['o[2][testigos][vacio]', 'true'])
    const want = expected((r) => r.tipo !== 'lesiones' && (r.estado === 'pendiente' || r.prioridad === 'urgente') && (fold(r.descripcion).includes('bicicleta') || empty(r.testigos)))
    expect(want.total).toBeGreaterThan(0)
    expect(await found(admin, query)).toEqual(want)
  })

  it('with q (full-text search)', async () => {
    const want = expected((r) => /robo/i.test(r.descripcion) && (r.estado === 'archivada' || r.prioridad === 'alta'))
    expect(want.total).toBe(2)
    expect(await found(admin, qs(['q', 'robo'], ['o[1][estado]', 'archivada'], ['o[1][prioridad]', 'alta']))).toEqual(want)
  })

  it('the total is exact across pages', async () => {
    const query = qs(['o[1][estado]', 'archivada'], ['o[1][prioridad][in]', 'alta,urgente'])
    const want = expected((r) => r.estado === 'archivada' || ['alta', 'urgente'].includes(r.prioridad))
    const pages = [ok(await admin.get(`/denuncias?${query}&limit=2`)), ok(await admin.get(`/denuncias?${query}&limit=2&offset=2`)), ok(await admin.get(`/denuncias?${query}&limit=2&offset=4`))]
    expect(pages.map((p) => p.total)).toEqual([want.total, want.total, want.total])
    expect(sorted(pages.flatMap((p) => p.records.map((r: { _id: string }) => r._id)))).toEqual(want.ids)
  })

  it('groups may be sent in any order, numbered 1 to 9 with gaps', async () => {
    const query = qs(['o[9][prioridad]', 'baja'], ['o[9][prioridad]', 'alta'], ['o[3][estado]', 'pendiente'])
    expect(await found(admin, query)).toEqual(expected((r) => ['baja', 'alta'].includes(r.prioridad) && r.estado === 'pendiente'))
  })

  it('a group may come whole as JSON (o[N]={…}, as the API explorer sends it), read like its bracket form', async () => {
    const json = qs(['o[1]', JSON.stringify({ estado: 'archivada', prioridad: { in: 'alta,urgente' } })], ['o[2]', JSON.stringify({ tipo: ['robo', 'hurto'] })])
    const brackets = qs(['o[1][estado]', 'archivada'], ['o[1][prioridad][in]', 'alta,urgente'], ['o[2][tipo]', 'robo'], ['o[2][tipo]', 'hurto'])
    const want = expected((r) => (r.estado === 'archivada' || ['alta', 'urgente'].includes(r.prioridad)) && ['robo', 'hurto'].includes(r.tipo))
    expect(await found(admin, json)).toEqual(want)
    expect(await found(admin, brackets)).toEqual(want)
    expectError(await admin.get(`/denuncias?${qs(['o[1]', '{"estado":{"mas":"x"}}'])}`), 'DATOS_INVALIDOS')
    expectError(await admin.get(`/denuncias?${qs(['o[1]', '{}'])}`), 'DATOS_INVALIDOS')
  })
})

describe('row-level scope inside groups', () => {
  it('an agente finds and counts only own records, whatever the group says', async () => {
    const agente = await newUser(app, adminToken, 'agente', { personal_id: staffId })
    const api = client(app, agente.token)
    // The administrator created every fixture: the group alone matches them all.
    const query = qs(['o[1][estado]', 'pendiente'], ['o[1][prioridad]', 'urgente'], ['o[1][_created_by]', adminId])
    expect(await found(admin, query)).toEqual(expected(() => true))
    expect(await found(api, query)).toEqual(expected((r) => r.mine))
    expect(await found(api, qs(['o[1][estado]', 'archivada'], ['o[1][prioridad]', 'alta']))).toEqual(expected((r) => r.mine && (r.estado === 'archivada' || r.prioridad === 'alta')))
  })
})

describe('an encrypted field in a group', () => {
  const searches = async (): Promise<Array<Record<string, unknown>>> => h.db.query("select * from sys_lecturas where tipo = 'busqueda' order by id desc")

  it('is compared through its blind index and leaves a busqueda entry naming the field, never the value', async () => {
    const before = (await searches()).length
    const want = expected((r) => r.denunciante_dni === DNI || r.prioridad === 'urgente')
    expect(await found(admin, qs(['o[1][denunciante_dni]', DNI], ['o[1][prioridad]', 'urgente']))).toEqual(want)
    const rows = await searches()
    expect(rows.length).toBe(before + 1)
    expect(rows[0]).toMatchObject({ usuario: adminId, modulo: 'denuncias', campos: ['denunciante_dni'], coincidencias: want.total })
    expect(JSON.stringify(rows[0])).not.toContain(DNI)
    const audit = ok(await admin.get(`/auditoria/lecturas?tipo=busqueda&usuario=${adminId}`)).records
    expect(audit[0]).toMatchObject({ campos: ['denunciante_dni'], coincidencias: want.total })
  })

  it('vacio and in on it, in two groups: one entry naming it once', async () => {
    const want = expected((r) => (empty(r.denunciante_dni) || r.estado === 'archivada') && ([DNI, validDni(22222222)].includes(r.denunciante_dni ?? '') || r.tipo === 'daños'))
    const query = qs(['o[1][denunciante_dni][vacio]', 'true'], ['o[1][estado]', 'archivada'], ['o[2][denunciante_dni][in]', `${DNI},${validDni(22222222)}`], ['o[2][tipo]', 'daños'])
    expect(await found(admin, query)).toEqual(want)
    expect((await searches())[0]).toMatchObject({ campos: ['denunciante_dni'], coincidencias: want.total })
  })

  it('needs descifrar: 403 without it, and nothing is logged', async () => {
    const before = (await searches()).length
    for (const rol of ['consulta']) {
      const api = client(app, (await newUser(app, adminToken, rol)).token)
      expectError(await api.get(`/denuncias?${qs(['o[1][denunciante_dni]', DNI], ['o[1][estado]', 'pendiente'])}`), 'SIN_PERMISOS')
    }
    expect((await searches()).length).toBe(before)
  })

  it('an oficial or an agente, who decrypt only own records, find only those through the group', async () => {
    for (const rol of ['oficial', 'agente']) {
      const user = await newUser(app, adminToken, rol, { personal_id: staffId })
      const api = client(app, user.token)
      expect(await found(api, qs(['o[1][denunciante_dni]', DNI], ['o[1][denunciante_dni]', validDni(11111111)])), rol).toEqual(expected((r) => r.mine && [DNI, validDni(11111111)].includes(r.denunciante_dni ?? '')))
    }
  })
})

describe('a malformed group: 400 Datos inválidos naming the parameter as sent', () => {
  it.each<[string, string | string[], RegExp]>([
    ['o[0][estado]', 'pendiente', /del 1 al 9/],
    ['o[10][estado]', 'pendiente', /del 1 al 9/],
    ['o[x][estado]', 'pendiente', /del 1 al 9/],
    ['o[1]', 'pendiente', /falta el campo/],
    ['o', 'pendiente', /grupo mal formado/],
    ['o[1][a][b][c]', 'pendiente', /grupo mal formado/],
    ['o[1][estdo]', 'pendiente', /campo desconocido "estdo" \(¿quería decir "estado"\?\)/],
    ['o[1][estado][mayor]', 'pendiente', /operador desconocido "mayor"/],
    ['o[1][fecha_hechos][contiene]', '2026', /no se aplica/],
    ['o[1][fecha_hechos][gte]', 'ayer', /./],
    ['o[1][fecha_hechos][in]', '2026-01-10 10:00:00,mañana', /./],
    ['o[1][fecha_hechos][gt]', ['2026-01-10 10:00:00', '2026-01-11 10:00:00'], /varios valores/],
    ['o[1][testigos][vacio]', 'si', /true o false/],
    ['o[1][descripcion]', 'robo', /no se aplica/],
    ['o[1][denunciante_telefono]', '600000000', /cifrado/],
  ])('%s=%s', async (key, value, mensaje) => {
    const res = await admin.get(`/denuncias?${qs(['o[1][tipo]', 'robo'], ...[value].flat().map((v): [string, string] => [key, v]))}`)
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: key, mensaje: expect.stringMatching(mensaje) }])
  })
})

describe('the OpenAPI document', () => {
  it('declares o[1] … o[9] on every list as JSON (content: application/json), one shared group schema with each filter\'s operators and value schemas, an example the service takes', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
    const deepObjects = Object.values(doc.paths as Record<string, Record<string, { parameters?: Array<Record<string, any>> }>>)
      .flatMap((item) => Object.values(item)).flatMap((op) => op.parameters ?? []).filter((p) => p.style === 'deepObject')
    expect(deepObjects).toEqual([])
    for (const mod of app.registry.modules) {
      const params = doc.paths[`/${mod.path}`].get.parameters as Array<Record<string, any>>
      const groups = params.filter((p) => p.name.startsWith('o['))
      expect(groups.map((p) => p.name), mod.name).toEqual(['o[1]', 'o[2]', 'o[3]', 'o[4]', 'o[5]', 'o[6]', 'o[7]', 'o[8]', 'o[9]'])
      for (const p of groups) {
        expect(p, mod.name).toMatchObject({ in: 'query', required: false, content: { 'application/json': { schema: { $ref: `#/components/schemas/${mod.name}Grupo` } } } })
        expect(p.schema).toBeUndefined()
        expect(p.style).toBeUndefined()
      }
      expect(groups[0]!.description).toContain('o[1]={"estado":"pendiente","prioridad":{"in":["alta","urgente"]}}')
      const group = doc.components.schemas[`${mod.name}Grupo`]
      expect(group).toMatchObject({ type: 'object', minProperties: 1, additionalProperties: false })
      for (const f of listFilters(mod)) {
        const byOperator = f.operators.includes('eq') ? group.properties[f.name].anyOf.at(-1) : group.properties[f.name]
        expect(Object.keys(byOperator.properties), `${mod.name}.${f.name}`).toEqual([...f.operators])
        // A value as the plain filter's (repeated: a list), `in` as a list of them.
        const plain = params.find((p) => p.name === (f.operators.includes('eq') ? f.name : `${f.name}[${f.operators[0]}]`))!.schema
        if (f.operators.includes('eq')) expect(group.properties[f.name].anyOf.slice(0, 2)).toEqual([plain.items, plain])
        if (f.operators.includes('in')) expect(byOperator.properties.in).toMatchObject({ type: 'array', maxItems: 100 })
      }
      expect(Object.keys(group.properties)).toEqual(listFilters(mod).map((f) => f.name))
      // The example is a group the service takes, sent as the document says: JSON.
      const example = groups[0]!.example as Record<string, unknown>
      expect(Object.keys(example).length, mod.name).toBeGreaterThan(0)
      ok(await admin.get(`/${mod.path}?${qs(['o[1]', JSON.stringify(example)])}`))
    }
  })

  it('a JSON group takes the values in their JSON types: in as a list, vacio as a boolean, a list as any of its values', async () => {
    const json = qs(['o[1]', JSON.stringify({ estado: 'archivada', prioridad: { in: ['alta', 'urgente'] } })], ['o[2]', JSON.stringify({ tipo: ['robo', 'hurto'], observaciones: { vacio: false } })])
    const want = expected((r) => (r.estado === 'archivada' || ['alta', 'urgente'].includes(r.prioridad)) && (['robo', 'hurto'].includes(r.tipo) || !empty(r.observaciones)))
    expect(await found(admin, json)).toEqual(want)
  })
})

describe('property: any groups of conditions find exactly what an in-memory evaluation finds', () => {
  /** A condition: its parameter after `o[N]`, its value and what it accepts. */
  type Cond = { param: string, value: string, keep: (r: Fix) => boolean }
  const conditions: Array<fc.Arbitrary<Cond>> = [
    fc.constantFrom('pendiente', 'archivada', 'investigacion').map((v) => ({ param: '[estado]', value: v, keep: (r: Fix) => r.estado === v })),
    fc.constantFrom('baja', 'media', 'alta', 'urgente').map((v) => ({ param: '[prioridad][ne]', value: v, keep: (r: Fix) => r.prioridad !== v })),
    fc.subarray(['baja', 'media', 'alta', 'urgente'], { minLength: 1 }).map((vs) => ({ param: '[prioridad][in]', value: vs.join(','), keep: (r: Fix) => vs.includes(r.prioridad) })),
    fc.constantFrom('robo', 'hurto', 'daños', 'otro').map((v) => ({ param: '[tipo]', value: v, keep: (r: Fix) => r.tipo === v })),
    fc.integer({ min: 1, max: 8 }).map((m) => {
      const v = `2026-0${m}-12 12:00:00`
      return { param: '[fecha_hechos][gt]', value: v, keep: (r: Fix) => r.fecha_hechos > v }
    }),
    fc.integer({ min: 1, max: 8 }).map((m) => {
      const v = `2026-0${m}-12 12:00:00`
      return { param: '[fecha_hechos][lte]', value: v, keep: (r: Fix) => r.fecha_hechos <= v }
    }),
    fc.constantFrom('bici', 'ROBO', 'camión', 'en la', 'zzz').map((v) => ({ param: '[descripcion][contiene]', value: v, keep: (r: Fix) => fold(r.descripcion).includes(fold(v)) })),
    fc.boolean().map((b) => ({ param: '[observaciones][vacio]', value: String(b), keep: (r: Fix) => empty(r.observaciones) === b })),
    fc.boolean().map((b) => ({ param: '[testigos][vacio]', value: String(b), keep: (r: Fix) => empty(r.testigos) === b })),
  ]
  const group = fc.array(fc.oneof(...conditions), { minLength: 1, maxLength: 3 })

  it('for up to three groups of up to three conditions', async () => {
    await fc.assert(fc.asyncProperty(fc.array(group, { minLength: 1, maxLength: 3 }), async (groups) => {
      const pairs = groups.flatMap((g, i) => g.map((c): [string, string] => [`o[${i + 1}]${c.param}`, c.value]))
      // Conditions of one group on the same parameter are a repeated parameter: any of the values (eq) or
      // refused as several values (other operators); keep the property to distinct parameters per group.
      fc.pre(new Set(pairs.map(([k]) => k)).size === pairs.length)
      const want = expected((r) => groups.every((g) => g.some((c) => c.keep(r))))
      expect(await found(admin, qs(['lugar_hechos', PLACE], ...pairs))).toEqual(want)
    }), { numRuns: 60 })
  })
})
