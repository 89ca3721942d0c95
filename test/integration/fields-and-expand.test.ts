/**
 * `campos` and `expandir` on a list and a GET by id (docs/user-guide.md
 * "Choosing fields and related records (campos, expandir)"), through HTTP:
 * only the named keys; encrypted fields withheld and logged only when
 * named; the columns the database reads; related records as the caller may
 * see them (the target's `ver`, scope and `descifrar`), `_sin_expandir`,
 * one query per expanded field whatever the page; every 400. A role
 * `turnero` (turnos and personal, no vehiculos) is added to the real
 * modules.yaml for a target the caller may not see at all.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { parseRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { client, ok, sampleBody, validDni, type Api, type Res } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { queriesOf, type SentQuery } from '../helpers/sql-capture.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

const ROLE_ENUM = 'enum: [superadmin, administrador, jefe, oficial, agente, delegado_proteccion_datos, consulta]'
const registry = parseRegistry(readFileSync('modules.yaml', 'utf8')
  .replace('\nmodules:\n', `
  turnero:
    permissions: [turnos.ver, personal.ver]

modules:
`)
  .replace(ROLE_ENUM, ROLE_ENUM.replace('consulta]', 'consulta, turnero]')), 'modules.yaml (+ turnero)')
const mod = (name: string) => registry.byName.get(name)!

let h: Harness, app: FastifyInstance, adminToken: string, admin: Api
let agente: Api, consulta: Api, oficial: Api, turnero: Api
/** p1: the agente's and the oficial's staff record; p2: someone else's. */
let p1: string, p2: string
/** v1 assigned to p1, v2 to p2, v3 deleted. */
let v1: string, v2: string, v3: string
/** t1: p1 with v1 (compañero p2); t2: p1 with v2; t3: p2 with v2; t4: p1 with v3 (deleted). */
let t1: string, t2: string, t3: string, t4: string
let d1: string

const keys = (r: Record<string, unknown>): string[] => Object.keys(r)
const created = async (path: string, body: Record<string, unknown>): Promise<string> => ok(await admin.post(path, body), 201)._id as string

async function staff (n: number): Promise<string> {
  return created('/personal', { ...sampleBody(mod('personal'), new Map()), nif: validDni(40_000_000 + n), fecha_nacimiento: '1980-01-02', contacto_telefono: '600111222' })
}

async function vehicle (owner: string): Promise<string> {
  return created('/vehiculos', { ...sampleBody(mod('vehiculos'), new Map([['personal', owner]])), bastidor: null })
}

async function shift (agent: string, veh: string, mate?: string): Promise<string> {
  return created('/turnos', { agente_id: agent, fecha: '2026-06-01', tipo_turno: 'mañana', servicio: 'patrulla', vehiculo_asignado: veh, ...(mate !== undefined && { compañero: mate }) })
}

/** How many read-log entries (docs/operator-guide.md "Read log") name module `modulo`. */
async function readLogCount (modulo: string): Promise<number> {
  return ok(await admin.get(`/auditoria/lecturas?modulo=${modulo}&limit=1`)).total as number
}

/** The columns each statement reading table `table` selected. */
function selectedColumns (queries: SentQuery[], table: string): string[][] {
  return queries
    .map((q) => new RegExp(`^select (?!count\\()(.*?) from "${table}"`).exec(q.sql)?.[1])
    .filter((cols): cols is string => cols !== undefined)
    .map((cols) => cols.split(', ').map((c) => /"([^"]+)"$/.exec(c)?.[1] ?? c).sort())
}

/** Statements reading table `table` that `run` sent. */
async function readsOf (table: string, run: () => Promise<unknown>): Promise<number> {
  return (await queriesOf(app.orm.em, run)).filter((q) => q.sql.startsWith('select') && q.sql.includes(` from "${table}"`)).length
}

function expectInvalid (res: Res, campo: string, text: RegExp): void {
  expectError(res, 'DATOS_INVALIDOS')
  expect(res.body.detalles).toEqual([{ campo, mensaje: expect.stringMatching(text) }])
}

beforeAll(async () => {
  ({ h, app, token: adminToken, admin } = await startTestApp({ registry }))
  p1 = await staff(1)
  p2 = await staff(2)
  v1 = await vehicle(p1)
  v2 = await vehicle(p2)
  v3 = await vehicle(p1)
  t1 = await shift(p1, v1, p2)
  t2 = await shift(p1, v2)
  t3 = await shift(p2, v2)
  t4 = await shift(p1, v3)
  ok(await admin.del(`/vehiculos/${v3}`))
  d1 = await created('/denuncias', { ...sampleBody(mod('denuncias'), new Map([['personal', p1]])), denunciante_dni: validDni(41_000_001) })
  const as = async (rol: string, fields: Record<string, unknown> = {}): Promise<Api> => client(app, (await newUser(app, adminToken, rol, fields)).token)
  agente = await as('agente', { personal_id: p1 })
  oficial = await as('oficial', { personal_id: p1 })
  consulta = await as('consulta')
  turnero = await as('turnero')
})

afterAll(async () => { await h?.close() })

describe('campos', () => {
  it('a list and a GET return _id and the named fields only, system fields included, in record order', async () => {
    const page = ok(await admin.get('/personal?campos=_version,nombre'))
    expect(page.total).toBe(2)
    for (const r of page.records) expect(keys(r)).toEqual(['_id', 'nombre', '_version'])
    const res = await admin.get(`/personal/${p1}?campos=tip,_created`)
    expect(keys(ok(res))).toEqual(['_id', 'tip', '_created'])
    // No version named, no version to send as ETag; named, it is sent.
    expect(res.headers.etag).toBeUndefined()
    expect((await admin.get(`/personal/${p1}?campos=tip,_version`)).headers.etag).toBe('"1"')
    // Without campos, the whole record as before.
    expect(keys(ok(await admin.get(`/personal/${p1}`)))).toContain('apellidos')
  })

  it('an encrypted field named is decrypted for a holder of descifrar, withheld and named in _restringidos for others (only the named ones)', async () => {
    expect(ok(await admin.get(`/personal/${p1}?campos=nombre,nif`))).toEqual({ _id: p1, nombre: expect.any(String), nif: validDni(40_000_001) })
    expect(ok(await consulta.get(`/personal/${p1}?campos=nombre,nif`))).toEqual({ _id: p1, nombre: expect.any(String), _restringidos: ['nif'] })
    expect(ok(await consulta.get(`/personal/${p1}?campos=nombre`))).toEqual({ _id: p1, nombre: expect.any(String) })
    // descifrar:propios: the oficial's own denuncia (agente_asignado is their staff record) is decrypted.
    expect(ok(await oficial.get(`/denuncias?campos=denunciante_dni&_id=${d1}`)).records).toEqual([{ _id: d1, denunciante_dni: validDni(41_000_001) }])
  })

  it('a read naming no encrypted field writes no read-log entry; one naming it does', async () => {
    const before = await readLogCount('personal')
    ok(await admin.get('/personal?campos=nombre,tip'))
    ok(await admin.get(`/personal/${p1}?campos=nombre`))
    expect(await readLogCount('personal')).toBe(before)
    ok(await admin.get('/personal?campos=nombre,nif'))
    expect(await readLogCount('personal')).toBe(before + 2)
    const [entry] = ok(await admin.get('/auditoria/lecturas?modulo=personal&limit=1')).records
    expect(entry.campos).toEqual(['nif'])
  })

  it('the database reads only the columns the answer needs (and those a descifrar:propios decision needs)', async () => {
    // A superadmin reads blocked records, so whether each is blocked is read with it (docs/decisions.md "Blocking personal data is access, not a version").
    const list = await queriesOf(app.orm.em, () => admin.get('/personal?campos=nombre,_version'))
    expect(selectedColumns(list, mod('personal').table)).toEqual([['_bloqueado', '_id', '_version', 'nombre']])
    const one = await queriesOf(app.orm.em, () => admin.get(`/personal/${p1}?campos=nif`))
    expect(selectedColumns(one, mod('personal').table)).toEqual([['_bloqueado', '_id', 'nif']])
    const own = await queriesOf(app.orm.em, () => oficial.get(`/denuncias?campos=denunciante_dni&_id=${d1}`))
    expect(selectedColumns(own, mod('denuncias').table)).toEqual([['_created_by', '_id', 'agente_asignado', 'denunciante_dni']])
    // Without campos, every column, as before.
    const all = await queriesOf(app.orm.em, () => admin.get(`/personal/${p1}`))
    expect(selectedColumns(all, mod('personal').table)[0]!.length).toBeGreaterThan(10)
  })

  it('unknown names, empty lists and repeated parameters are a 400 naming campos, with a hint', async () => {
    expectInvalid(await admin.get('/personal?campos=nombr'), 'campos', /desconocido "nombr".*¿quería decir "nombre"/)
    expectInvalid(await admin.get(`/personal/${p1}?campos=_versoin`), 'campos', /¿quería decir "_version"/)
    expectInvalid(await admin.get('/usuarios?campos=password'), 'campos', /desconocido "password"/)
    expectInvalid(await admin.get('/personal?campos=nombre,'), 'campos', /separados por comas/)
    expectInvalid(await admin.get('/personal?campos=nombre&campos=tip'), 'campos', /varios valores/)
  })
})

describe('expandir', () => {
  it('replaces each named ref by the referenced record, on a list and a GET; its own refs stay ids', async () => {
    const rec = ok(await admin.get(`/turnos/${t1}?expandir=vehiculo_asignado,agente_id`))
    expect(rec.vehiculo_asignado).toMatchObject({ _id: v1, matricula: expect.any(String), asignado_a: p1, _version: 1 })
    expect(rec.agente_id).toMatchObject({ _id: p1, nombre: expect.any(String), nif: validDni(40_000_001) })
    expect(rec.compañero).toBe(p2)
    expect(rec._sin_expandir).toBeUndefined()
    const page = ok(await admin.get('/turnos?expandir=agente_id&sort=_id'))
    expect(page.records.map((r: any) => r.agente_id._id)).toEqual([p1, p1, p2, p1])
    expect(page.records[0].vehiculo_asignado).toBe(v1)
  })

  it('follows the target module\'s scope: a ref the caller may not see keeps its id and is named in _sin_expandir', async () => {
    // The agente sees their own turnos (t1, t2, t4) and their own vehicles (v1).
    const page = ok(await agente.get('/turnos?expandir=vehiculo_asignado&sort=_id'))
    const byId = new Map(page.records.map((r: any) => [r._id, r]))
    expect([...byId.keys()].sort()).toEqual([t1, t2, t4].sort())
    expect(byId.has(t3)).toBe(false)
    expect((byId.get(t1) as any).vehiculo_asignado._id).toBe(v1)
    expect(byId.get(t2)).toMatchObject({ vehiculo_asignado: v2, _sin_expandir: ['vehiculo_asignado'] })
    // No vehiculos.ver at all: nothing expanded, and the target is not even queried.
    let res: Res | undefined
    expect(await readsOf(mod('vehiculos').table, async () => { res = await turnero.get(`/turnos/${t1}?expandir=vehiculo_asignado`) })).toBe(0)
    expect(ok(res!)).toMatchObject({ vehiculo_asignado: v1, _sin_expandir: ['vehiculo_asignado'] })
  })

  it('a deleted target is not expanded', async () => {
    expect(ok(await admin.get(`/turnos/${t4}?expandir=vehiculo_asignado`))).toMatchObject({ vehiculo_asignado: v3, _sin_expandir: ['vehiculo_asignado'] })
  })

  it('withholds encrypted fields of an expanded record the caller may not decrypt, and logs those it decrypts in the target module', async () => {
    const rec = ok(await agente.get(`/turnos/${t1}?expandir=agente_id,compañero`))
    expect(rec.agente_id).toMatchObject({ _id: p1, nombre: expect.any(String), _restringidos: ['nif', 'fecha_nacimiento', 'contacto_telefono'] })
    expect(rec.agente_id.nif).toBeUndefined()
    const before = await readLogCount('personal')
    ok(await admin.get(`/turnos/${t1}?expandir=agente_id,compañero`))
    expect(await readLogCount('personal')).toBe(before + 2)
    const entries = ok(await admin.get('/auditoria/lecturas?modulo=personal&limit=2')).records
    expect(entries.map((e: any) => e.registro).sort()).toEqual([p1, p2].sort())
  })

  it('campos may name fields of an expanded record: it then carries _id and those', async () => {
    const rec = ok(await admin.get(`/turnos/${t1}?expandir=agente_id,vehiculo_asignado&campos=fecha,agente_id.nombre,agente_id.nif`))
    expect(rec).toEqual({ _id: t1, agente_id: { _id: p1, nombre: expect.any(String), nif: validDni(40_000_001) }, fecha: '2026-06-01', vehiculo_asignado: expect.objectContaining({ _id: v1, matricula: expect.any(String) }) })
    const mine = ok(await agente.get(`/turnos/${t1}?expandir=agente_id&campos=agente_id.nif`))
    expect(mine).toEqual({ _id: t1, agente_id: { _id: p1, _restringidos: ['nif'] } })
    // Naming no encrypted field of the target reads and logs none.
    const before = await readLogCount('personal')
    const queries = await queriesOf(app.orm.em, () => admin.get(`/turnos?expandir=agente_id&campos=agente_id.nombre`))
    expect(selectedColumns(queries, mod('personal').table)).toEqual([['_bloqueado', '_id', 'nombre']])
    expect(await readLogCount('personal')).toBe(before)
  })

  it('costs one query per expanded field, whatever the page size', async () => {
    for (const limit of [1, 4]) {
      const queries = await queriesOf(app.orm.em, () => admin.get(`/turnos?limit=${limit}&sort=_id&expandir=agente_id,compañero,vehiculo_asignado`))
      const reads = (table: string): number => queries.filter((q) => q.sql.startsWith('select') && q.sql.includes(` from "${table}"`)).length
      expect(reads(mod('personal').table), `limit ${limit}`).toBe(2)
      expect(reads(mod('vehiculos').table), `limit ${limit}`).toBe(1)
    }
  })

  it('an unknown field, a field that is no ref, and campos naming a field not expanded or unknown in the target are a 400', async () => {
    expectInvalid(await admin.get('/turnos?expandir=vehiculo_asignad'), 'expandir', /desconocido "vehiculo_asignad".*¿quería decir "vehiculo_asignado"/)
    expectInvalid(await admin.get(`/turnos/${t1}?expandir=fecha`), 'expandir', /"fecha" no es una referencia/)
    expectInvalid(await admin.get('/turnos?expandir=agente_id,'), 'expandir', /separados por comas/)
    expectInvalid(await admin.get('/turnos?campos=agente_id.nombre'), 'campos', /"agente_id" no se expande/)
    expectInvalid(await admin.get(`/turnos/${t1}?expandir=agente_id&campos=agente_id.nombr`), 'campos', /desconocido "agente_id.nombr".*¿quería decir "nombre"/)
    expectInvalid(await admin.get('/turnos?expandir=agente_id&campos=agente_i.nombre'), 'campos', /¿quería decir "agente_id"/)
  })
})
