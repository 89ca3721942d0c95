/**
 * Row-level scope (docs/user-guide.md "Authentication and roles"), through HTTP and for every module of the
 * registry. Two roles added to the real modules.yaml drive the generic part:
 * `propio` (every action limited to own records, creating excepted) and
 * `mixto` (sees everything; edits, deletes and decrypts only its own). Own
 * means created by the caller, or tied to the caller's `personal_id` by an
 * owner field (for the staff module: the record that is the caller's
 * `personal_id`). Then the default matrix (agente, oficial), the order of
 * checks, and a change of `personal_id`, `rol` or `activo` seen by a second
 * instance on the next request.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { parseRegistry } from '../../core/registry/load.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { bulkLoad } from '../helpers/bulk-load.js'
import { planNodes } from '../helpers/explain.js'
import type { Harness } from '../helpers/app.js'
import { client, ok, refOrder, sampleBody, validDni, withheldNames, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

const ROLE_ENUM = 'enum: [superadmin, administrador, jefe, oficial, agente, delegado_proteccion_datos, consulta]'
const text = readFileSync('modules.yaml', 'utf8')
  .replace('\nmodules:\n', `
  propio:
    permissions: ['*.ver:propios', '*.crear', '*.editar:propios', '*.eliminar:propios', '*.descifrar:propios']
  mixto:
    permissions: ['*.ver', '*.crear', '*.editar:propios', '*.eliminar:propios', '*.descifrar:propios']

modules:
`)
  .replace(ROLE_ENUM, ROLE_ENUM.replace('consulta]', 'consulta, propio, mixto]'))
const registry = parseRegistry(text, 'modules.yaml (+ propio, mixto)')
const modules = refOrder(registry).filter((m) => !m.users)

interface User { id: string, api: Api, api2: Api, personalId: string | null }

let h: Harness, app: FastifyInstance, app2: FastifyInstance, adminToken: string, admin: Api
const refs = new Map<string, string>()

async function staff (): Promise<string> {
  return ok(await admin.post('/personal', sampleBody(registry.byName.get('personal')!, refs)), 201)._id as string
}

async function user (rol: string, personalId: string | null): Promise<User> {
  const { id, token } = await newUser(app, adminToken, rol, personalId !== null ? { personal_id: personalId } : {})
  return { id, api: client(app, token), api2: client(app2, token), personalId }
}

/** A body of `mod` whose owner fields hold `owner` (required ones) or are left out, except `set`. */
function bodyOf (mod: ModuleDef, owner: string, set: Record<string, unknown> = {}): Record<string, unknown> {
  const body = sampleBody(mod, refs)
  for (const f of mod.ownerFields) {
    if (f.required) body[f.name] = owner
    else delete body[f.name]
  }
  return { ...body, ...set }
}

/** A field a test may change freely (free text, else a time of day). */
function editable (mod: ModuleDef): FieldDef {
  const free = (f: FieldDef): boolean => (f.type === 'string' || f.type === 'text') && f.enum === undefined && !f.unique && !f.encrypted && f.pattern === undefined
  return mod.fields.find((f) => free(f) && !f.required) ?? mod.fields.find(free) ?? mod.fields.find((f) => f.type === 'time')!
}

/** A valid change of `editable(mod)`, and an invalid one (wrong type). */
function change (mod: ModuleDef, text = 'cambio'): Record<string, unknown> {
  const f = editable(mod)
  return { [f.name]: f.type === 'time' ? '09:15' : text }
}
const invalidChange = (mod: ModuleDef): Record<string, unknown> => ({ [editable(mod).name]: 12345 })

/** The row-level scope rule (docs/user-guide.md "Authentication and roles"), restated over an API record: created by the user, or tied to their staff record. */
function ownedBy (mod: ModuleDef, rec: Record<string, unknown>, who: User): boolean {
  return rec._created_by === who.id || (who.personalId !== null && (mod.ownerFields.some((f) => rec[f.name] === who.personalId) || (mod.ownedById && rec._id === who.personalId)))
}

const ids = (records: Array<{ _id: string }>): string[] => records.map((r) => r._id).sort()
const hasEncrypted = (mod: ModuleDef): boolean => mod.fields.some((f) => f.encrypted)

beforeAll(async () => {
  ({ h, app, token: adminToken, admin } = await startTestApp({ registry }))
  app2 = await h.app({ registry })
  refs.set('personal', ok(await admin.post('/personal', sampleBody(registry.byName.get('personal')!, new Map())), 201)._id as string)
  for (const m of modules) {
    if (m.name === 'personal' || refs.has(m.name)) continue
    refs.set(m.name, ok(await admin.post(`/${m.path}`, sampleBody(m, refs)), 201)._id as string)
  }
})
afterAll(async () => { await h.close() })

describe.each(modules.map((m) => [m.name, m] as const))('%s', (_name, mod) => {
  const path = `/${mod.path}`
  let other: string
  let u: User
  let m: User
  /** Records of `u` (propio): created by u, or by admin with an owner field on u's staff record. */
  const own: string[] = []
  const ownByU: string[] = []
  let foreign: string
  let foreignDeleted: string

  beforeAll(async () => {
    other = await staff()
    u = await user('propio', await staff())
    m = await user('mixto', await staff())
    for (let i = 0; i < 3; i++) ownByU.push(ok(await u.api.post(path, bodyOf(mod, other)), 201)._id)
    own.push(...ownByU)
    for (const f of mod.ownerFields) own.push(ok(await admin.post(path, bodyOf(mod, other, { [f.name]: u.personalId })), 201)._id)
    if (mod.ownedById) own.push(u.personalId!)
    foreign = ok(await admin.post(path, bodyOf(mod, other)), 201)._id
    foreignDeleted = ok(await admin.post(path, bodyOf(mod, other)), 201)._id
    ok(await admin.del(`${path}/${foreignDeleted}`))
  })

  it('a list holds exactly the own records, and its total counts only them; filters, sort and paging apply within the scope', async () => {
    const all = ok(await u.api.get(`${path}?limit=1000`))
    expect(all.total).toBe(own.length)
    expect(ids(all.records)).toEqual([...own].sort())
    const desc = [...ownByU].sort().reverse()
    const page = ok(await u.api.get(`${path}?_created_by=${u.id}&sort=-_id&limit=2&offset=1`))
    expect({ total: page.total, ids: page.records.map((r: { _id: string }) => r._id) }).toEqual({ total: 3, ids: desc.slice(1, 3) })
    expect(ok(await u.api.get(`${path}?_id=${foreign}`)).total).toBe(0)
    expect(ok(await u.api.get(`${path}?_id[in]=${foreign},${own[0]!}`)).records.map((r: { _id: string }) => r._id)).toEqual([own[0]])
    // Deleted records: only own ones, for a caller who may see deleted records.
    expect(ok(await u.api.get(`${path}?incluir_eliminados=true&_id=${foreignDeleted}`)).total).toBe(0)
  })

  it('outside the ver scope a record does not exist: GET, historial, verificar, PUT, DELETE and restaurar answer 404', async () => {
    for (const res of [
      await u.api.get(`${path}/${foreign}`),
      await u.api.get(`${path}/${foreign}/historial`),
      await u.api.get(`${path}/${foreign}/verificar`),
      await u.api.get(`${path}/${foreignDeleted}/historial`),
      await u.api.put(`${path}/${foreign}`, change(mod)),
      await u.api.del(`${path}/${foreign}`),
      await u.api.post(`${path}/${foreignDeleted}/restaurar`),
    ]) expectError(res, 'REGISTRO_NO_ENCONTRADO')
    // Exactly as for an id that does not exist.
    expectError(await u.api.get(`${path}/${mod.prefix}-2026-99999`), 'REGISTRO_NO_ENCONTRADO')
  })

  it('own records: GET, historial and verificar answer, decrypted; PUT, DELETE and restaurar work', async () => {
    for (const id of own) {
      const rec = ok(await u.api.get(`${path}/${id}`))
      expect(rec).not.toHaveProperty('_restringidos')
      const versions = ok(await u.api.get(`${path}/${id}/historial`)).versiones
      expect(versions.every((v: { registro: object }) => !('_restringidos' in v.registro))).toBe(true)
      expect(ok(await u.api.get(`${path}/${id}/verificar`))).toEqual({ valido: true })
    }
    const id = own.at(-1)!
    const put = ok(await u.api.put(`${path}/${id}`, change(mod, 'cambio propio')))
    expect(put).toMatchObject({ _id: id, ...change(mod, 'cambio propio') })
    expect(put).not.toHaveProperty('_restringidos')
    if (mod.name === 'personal') return // deleting one's own staff record would end the test's ownership
    ok(await u.api.del(`${path}/${id}`))
    expectError(await u.api.get(`${path}/${id}`), 'REGISTRO_NO_ENCONTRADO')
    expect(ok(await u.api.post(`${path}/${id}/restaurar`))).toMatchObject({ _id: id, _deleted: null })
  })

  it('with ver whole and the other actions own-only: foreign records are shown withheld, and PUT/DELETE on them are 403', async () => {
    const listed = ok(await m.api.get(`${path}?limit=1000`))
    expect(listed.total).toBe(ok(await admin.get(`${path}?limit=1`)).total)
    const mine = ok(await m.api.post(path, bodyOf(mod, other)), 201)
    expect(mine).not.toHaveProperty('_restringidos')
    const rec = ok(await m.api.get(`${path}/${foreign}`))
    const versions = ok(await m.api.get(`${path}/${foreign}/historial`)).versiones
    if (hasEncrypted(mod)) {
      expect(rec._restringidos).toEqual(withheldNames(mod))
      expect(versions.every((v: { registro: { _restringidos?: string[] } }) => v.registro._restringidos !== undefined)).toBe(true)
      for (const r of ok(await m.api.get(`${path}?limit=1000`)).records) expect('_restringidos' in r, r._id).toBe(!ownedBy(mod, r, m))
    }
    expectError(await m.api.put(`${path}/${foreign}`, change(mod)), 'SIN_PERMISOS')
    expectError(await m.api.del(`${path}/${foreign}`), 'SIN_PERMISOS')
    expectError(await m.api.post(`${path}/${foreignDeleted}/restaurar`), 'SIN_PERMISOS')
    expect(ok(await m.api.get(`${path}/${foreign}/verificar`))).toEqual({ valido: true })
    // Order of checks: 400 before the record is looked at, 404 for a missing id, 403 outside scope before 409.
    expectError(await m.api.put(`${path}/${foreign}`, invalidChange(mod)), 'DATOS_INVALIDOS')
    expectError(await m.api.put(`${path}/${mod.prefix}-2026-99999`, change(mod)), 'REGISTRO_NO_ENCONTRADO')
    expectError(await m.api.put(`${path}/${foreign}`, { ...change(mod), _version: 99 }), 'SIN_PERMISOS')
    expectError(await m.api.put(`${path}/${mine._id}`, { ...change(mod), _version: 99 }), 'CONFLICTO_VERSION')
  })

  // Only modules with owner fields can have a record moved between staff members.
  if (mod.ownerFields.length > 0) it('a write may move a record out of the caller\'s scope; the response shows it as written', async () => {
    const f = mod.ownerFields[0]!
    const id = ok(await admin.post(path, bodyOf(mod, other, { [f.name]: m.personalId })), 201)._id
    expect(ok(await m.api.get(`${path}/${id}`))).not.toHaveProperty('_restringidos')
    const written = ok(await m.api.put(`${path}/${id}`, { [f.name]: other }))
    expect(written).toMatchObject({ _id: id, [f.name]: other, _version: 2 })
    expectError(await m.api.put(`${path}/${id}`, change(mod)), 'SIN_PERMISOS')
  })
})

describe('the default matrix', () => {
  const den = registry.byName.get('denuncias')!
  const dni = (n: number): string => validDni(n)

  it('agente: sees only own complaints, sanctions, calls, shifts, vehicles and equipment; the staff directory whole, withheld', async () => {
    const a = await user('agente', await staff())
    const noLink = await user('agente', null)
    const mine = ok(await admin.post('/denuncias', { ...sampleBody(den, refs), agente_asignado: a.personalId }), 201)._id
    const notMine = ok(await admin.post('/denuncias', sampleBody(den, refs)), 201)._id
    const created = ok(await a.api.post('/denuncias', sampleBody(den, refs)), 201)
    expect(created).not.toHaveProperty('_restringidos') // its own: decrypted
    expect(ids(ok(await a.api.get('/denuncias?limit=1000')).records)).toEqual([mine, created._id].sort())
    expectError(await a.api.get(`/denuncias/${notMine}`), 'REGISTRO_NO_ENCONTRADO')
    expectError(await a.api.put(`/denuncias/${notMine}`, { observaciones: 'x' }), 'REGISTRO_NO_ENCONTRADO')
    expectError(await a.api.del(`/denuncias/${mine}`), 'SIN_PERMISOS')
    expect(ok(await noLink.api.get('/denuncias?limit=1000')).total).toBe(0)
    const directory = ok(await a.api.get('/personal?limit=1000'))
    expect(directory.total).toBe(ok(await admin.get('/personal?limit=1')).total)
    expect(directory.records.every((r: { _restringidos?: string[] }) => r._restringidos?.includes('nif'))).toBe(true)
    for (const mod of ['sanciones', 'sala092', 'turnos', 'vehiculos', 'equipamiento']) {
      expect(ok(await noLink.api.get(`/${mod}?limit=1000`)).total, mod).toBe(0)
    }
  })

  it('agente: edits its own complaints (created or assigned) and reads their personal data; another\'s neither, as if it did not exist', async () => {
    const a = await user('agente', await staff())
    const assigned = ok(await admin.post('/denuncias', { ...sampleBody(den, refs), agente_asignado: a.personalId, denunciante_dni: dni(21) }), 201)._id as string
    const otherBody: Record<string, unknown> = { ...sampleBody(den, refs), denunciante_dni: dni(22) }
    const other = ok(await admin.post('/denuncias', otherBody), 201)._id as string
    const created = ok(await a.api.post('/denuncias', { ...sampleBody(den, refs), denunciante_dni: dni(23) }), 201)
    expect(created).toMatchObject({ denunciante_dni: dni(23) })
    expect(created).not.toHaveProperty('_restringidos')
    // Its own: read in plaintext, and edited — its created one and the one assigned to it, an encrypted field too.
    expect(ok(await a.api.get(`/denuncias/${assigned}`))).toMatchObject({ denunciante_dni: dni(21) })
    expect(ok(await a.api.put(`/denuncias/${created._id as string}`, { observaciones: 'ampliada por el agente' }))).toMatchObject({ observaciones: 'ampliada por el agente', denunciante_dni: dni(23), _version: 2 })
    expect(ok(await a.api.put(`/denuncias/${assigned}`, { denunciante_dni: dni(24) }))).toMatchObject({ denunciante_dni: dni(24), _version: 2 })
    expect(ok(await admin.get(`/denuncias/${assigned}`))).toMatchObject({ denunciante_dni: dni(24), _modified_by: a.id })
    const listed = ok(await a.api.get('/denuncias?limit=1000')).records as Array<Record<string, unknown>>
    expect(listed.filter((r) => r._restringidos !== undefined)).toEqual([])
    expect(ids(ok(await a.api.get(`/denuncias?denunciante_dni=${dni(24)}`)).records)).toEqual([assigned])
    // Another's: not found, not edited, not found by its DNI, not deleted either way.
    expectError(await a.api.get(`/denuncias/${other}`), 'REGISTRO_NO_ENCONTRADO')
    expectError(await a.api.put(`/denuncias/${other}`, { observaciones: 'ajena' }), 'REGISTRO_NO_ENCONTRADO')
    expect(ok(await a.api.get(`/denuncias?denunciante_dni=${dni(22)}`)).total).toBe(0)
    expectError(await a.api.del(`/denuncias/${created._id as string}`), 'SIN_PERMISOS')
    const [row] = await h.db.query<{ _version: number, observaciones: string | null }>('select "_version", observaciones from denuncias where "_id" = $1', [other])
    expect(row).toEqual({ _version: 1, observaciones: otherBody.observaciones ?? null })
    // The decrypted reads are in the read log: its own records, never the other.
    const reads = new Set((await h.db.query<{ registro: string }>("select registro from sys_lecturas where usuario = $1 and tipo = 'lectura'", [a.id])).map((r) => r.registro))
    expect(reads.has(assigned)).toBe(true)
    expect(reads.has(other)).toBe(false)
    // Where it only reads (vehicles, equipment, shifts) it still edits nothing.
    const mineVehicle = ok(await admin.post('/vehiculos', { ...sampleBody(registry.byName.get('vehiculos')!, refs), asignado_a: a.personalId }), 201)._id as string
    expect(ok(await a.api.get(`/vehiculos/${mineVehicle}`))._id).toBe(mineVehicle)
    expectError(await a.api.put(`/vehiculos/${mineVehicle}`, { modelo: 'x' }), 'SIN_PERMISOS')
  })

  it('oficial: sees every complaint; edits and decrypts only assigned or own ones; an encrypted filter finds only those', async () => {
    const o = await user('oficial', await staff())
    const assigned = ok(await admin.post('/denuncias', { ...sampleBody(den, refs), agente_asignado: o.personalId, denunciante_dni: dni(1) }), 201)._id
    const other = ok(await admin.post('/denuncias', { ...sampleBody(den, refs), denunciante_dni: dni(2) }), 201)._id
    expect(ok(await o.api.get(`/denuncias/${assigned}`))).toMatchObject({ denunciante_dni: dni(1) })
    expect(ok(await o.api.get(`/denuncias/${other}`))._restringidos).toContain('denunciante_dni')
    expect(ok(await o.api.put(`/denuncias/${assigned}`, { observaciones: 'asignada' }))).toMatchObject({ denunciante_dni: dni(1) })
    expectError(await o.api.put(`/denuncias/${other}`, { observaciones: 'ajena' }), 'SIN_PERMISOS')
    expectError(await o.api.del(`/denuncias/${assigned}`), 'SIN_PERMISOS')
    expect(ids(ok(await o.api.get(`/denuncias?denunciante_dni=${dni(1)}`)).records)).toEqual([assigned])
    expect(ok(await o.api.get(`/denuncias?denunciante_dni=${dni(2)}`)).total).toBe(0)
    expect(ok(await admin.get(`/denuncias?denunciante_dni=${dni(2)}`)).total).toBe(1)
    const reads = await h.db.query<{ registro: string }>("select registro from sys_lecturas where usuario = $1 and tipo = 'lectura'", [o.id])
    expect(new Set(reads.map((r) => r.registro))).toEqual(new Set([assigned]))
    // Each search by DNI left a trace, with the matches within the oficial's scope (docs/operator-guide.md "Read log").
    const searches = await h.db.query<{ coincidencias: number }>("select coincidencias from sys_lecturas where usuario = $1 and tipo = 'busqueda' order by id", [o.id])
    expect(searches.map((r) => r.coincidencias)).toEqual([1, 0])
  })
})

describe('changes to a user apply on the next request, on another instance', () => {
  it('personal_id, rol and activo', async () => {
    const den = registry.byName.get('denuncias')!
    const [p1, p2] = [await staff(), await staff()]
    const a = await user('agente', p1)
    const d1 = ok(await admin.post('/denuncias', { ...sampleBody(den, refs), agente_asignado: p1 }), 201)._id
    const d2 = ok(await admin.post('/denuncias', { ...sampleBody(den, refs), agente_asignado: p2 }), 201)._id
    expect(ids(ok(await a.api2.get('/denuncias?limit=1000')).records)).toEqual([d1])
    expect(ok(await a.api2.get('/me')).personal_id).toBe(p1)
    ok(await admin.put(`/usuarios/${a.id}`, { personal_id: p2 }))
    expect(ids(ok(await a.api2.get('/denuncias?limit=1000')).records)).toEqual([d2])
    expect(ok(await a.api2.get('/me')).personal_id).toBe(p2)
    ok(await admin.put(`/usuarios/${a.id}`, { personal_id: null }))
    expect(ok(await a.api2.get('/denuncias?limit=1000')).total).toBe(0)
    ok(await admin.put(`/usuarios/${a.id}`, { rol: 'consulta' }))
    expect(ok(await a.api2.get(`/denuncias/${d1}`))._id).toBe(d1)
    ok(await admin.put(`/usuarios/${a.id}`, { activo: false }))
    expectError(await a.api2.get('/denuncias'), 'TOKEN_INVALIDO')
  })
})

describe('a scoped list over 100,000 rows', () => {
  it('is served by indexes (EXPLAIN of the queries the service runs: no sequential scan)', async () => {
    const p = await staff()
    const a = await user('agente', p)
    await bulkLoad(h.db, 'denuncias', `
      insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash",
                             denunciante_nombre, tipo, fecha_hechos, lugar_hechos, descripcion, estado, prioridad, agente_asignado)
      select 'DEN-1990-' || lpad(i::text, 6, '0'), now() - i * interval '1 second',
             case when i % 500 = 0 then $1 else 'USR-1990-00001' end, now(), 'USR-1990-00001', 1, repeat('0', 64),
             'Nombre', 'robo', now(), 'Lugar', 'Descripción', 'pendiente', 'media',
             case when i % 400 = 0 then $2 else 'PER-1990-00001' end
      from generate_series(1, 100000) as i`, [a.id, p])
    await h.db.query('analyze denuncias')
    const seen: Array<{ sql: string, bindings: unknown[] }> = []
    const knex = app.orm.em.getConnection().getKnex()
    const onQuery = (q: { sql: string, bindings?: unknown[] }): void => { seen.push({ sql: q.sql, bindings: q.bindings ?? [] }) }
    knex.on('query', onQuery)
    try {
      const page = ok(await a.api.get('/denuncias?estado=pendiente&limit=20'))
      expect(page.total).toBe(200 + 250 - 50) // i % 500 or i % 400 (every 2000th counted once)
    } finally {
      knex.off('query', onQuery)
    }
    const queries = seen.filter((q) => /from "denuncias"/.test(q.sql))
    expect(queries).toHaveLength(2) // the page and its total
    for (const q of queries) {
      const nodes = await planNodes(h.db, q)
      const onTable = nodes.filter((x) => x['Relation Name'] === 'denuncias')
      expect(onTable.map((x) => x['Node Type']), q.sql).not.toContain('Seq Scan')
      expect(onTable.length, q.sql).toBeGreaterThan(0)
      expect(nodes.some((x) => /Index/.test(String(x['Node Type'])) && String(x['Index Name'] ?? '').startsWith('denuncias')), q.sql).toBe(true)
    }
  }, 120_000)
})
