/**
 * modules.yaml is the single source of truth (docs/administrator-guide.md "modules.yaml reference"): a module or field
 * added to it becomes working endpoints and columns on the next start over
 * the same database; a change that would lose or rewrite data stops the
 * start and leaves the data alone. Also the service routes that need no
 * token: /health, /ready and the OpenAPI document at /docs (docs/user-guide.md "API").
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import { ConfigError } from '../../core/errors.js'
import { valueColumn } from '../../db/columns.js'
import { planSchema } from '../../db/schema-sync.js'
import type { Harness } from '../helpers/app.js'
import { call, client, login, sampleBody, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { usingPostgres, usingRedis } from '../helpers/services.js'
import { edit } from '../helpers/edit-text.js'
import { startTestApp } from '../helpers/test-app.js'

const real = readFileSync('modules.yaml', 'utf8')
const registry = loadRegistry('modules.yaml')
const SYSTEM = ['_id', '_created', '_created_by', '_modified', '_modified_by', '_version', '_hash', '_deleted']

const AGENTE = '  agente:\n    description: Agente (operaciones básicas)\n    permissions:\n'
const withObjetos = edit(real, AGENTE, `${AGENTE}      - objetos_perdidos.ver\n      - objetos_perdidos.crear\n`) + `
  objetos_perdidos:
    prefix: OBJ
    label: Objetos perdidos
    state_field: estado
    fields:
      descripcion: { type: string, required: true, max_length: 200 }
      lugar_hallazgo: { type: string }
      valor_estimado: { type: decimal, min: 0 }
      estado: { type: string, enum: [depositado, entregado, destruido], default: depositado }
      entregado_por: { type: ref, ref: personal }
`
const MARCA = '      marca: { type: string, label: Marca }\n      modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla'
const COLORED = MARCA.replace('      tipo:', '      color: { type: string, max_length: 30 }\n      tipo:')
// q searches color alone (docs/administrator-guide.md "Indexes": `full_text`), so the tests below may remove and rename the other fields.
const withColor = edit(edit(real, MARCA, COLORED), '    full_text: [matricula, marca]\n', '    full_text: [color]\n')
/** withColor with the vehiculos fields edited. */
const vehiculos = (from: string, to: string): string => edit(withColor, COLORED, COLORED.replace(from, to))

let h: Harness
let base: FastifyInstance
let adminToken: string

async function columnsOf (table: string): Promise<Map<string, { data_type: string, character_maximum_length: number | null }>> {
  const rows = await h.db.query<{ column_name: string, data_type: string, character_maximum_length: number | null }>(
    'select column_name, data_type, character_maximum_length from information_schema.columns where table_name = $1 and table_schema = current_schema()', [table])
  return new Map(rows.map((r) => [r.column_name, r]))
}

/** The stored search documents of a table (`_search_<hash>` columns). */
async function documentsOf (table: string): Promise<string[]> {
  return [...(await columnsOf(table)).keys()].filter((c) => c.startsWith('_search_'))
}

beforeAll(async () => {
  ({ h, app: base, token: adminToken } = await startTestApp())
})
afterAll(async () => { await h.close() })

describe('service routes without a token', () => {
  it('GET /health answers 200 {status: ok}', async () => {
    const res = await call(base, 'GET', '/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { status: 'ok' } })
  })

  it('GET /ready checks the database (and Redis when configured)', async () => {
    const res = await call(base, 'GET', '/ready')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ success: true, data: { status: 'ready', database: 'ok' } })
    expect(res.body.data.redis).toBe(usingRedis ? 'ok' : 'in-process')
  })

  it('every response carries x-request-id, echoing a given one', async () => {
    const a = await call(base, 'GET', '/health')
    const b = await call(base, 'GET', '/health')
    expect(a.headers['x-request-id']).toMatch(/^[\w.-]{8,}$/)
    expect(b.headers['x-request-id']).not.toBe(a.headers['x-request-id'])
    const given = await call(base, 'GET', '/health', { headers: { 'x-request-id': 'peticion-abc.123' } })
    expect(given.headers['x-request-id']).toBe('peticion-abc.123')
    const denied = await call(base, 'GET', '/denuncias', { headers: { 'x-request-id': 'sin-token-1' } })
    expectError(denied, 'TOKEN_NO_PROPORCIONADO')
    expect(denied.headers['x-request-id']).toBe('sin-token-1')
    const unsafe = await call(base, 'GET', '/health', { headers: { 'x-request-id': 'bad id with spaces' } })
    expect(unsafe.headers['x-request-id']).not.toBe('bad id with spaces')
  })

  it('GET /docs serves the OpenAPI 3.1 document generated from modules.yaml', async () => {
    const res = await call(base, 'GET', '/docs')
    expect(res.status).toBe(200)
    const doc = res.body
    expect(doc.openapi).toMatch(/^3\.1\./)
    expect(doc.info.title).toEqual(expect.any(String))
    for (const m of registry.modules) {
      expect(Object.keys(doc.paths[`/${m.path}`] ?? {}).sort(), m.path).toEqual(['get', 'post'])
      expect(Object.keys(doc.paths[`/${m.path}/{id}`] ?? {}).sort(), m.path).toEqual(['delete', 'get', 'put'])
    }
    expect(doc.paths['/health']).toBeDefined()
    expect(doc.paths['/docs']).toBeUndefined()
    await expect(JSON.stringify(doc, null, 2)).toMatchFileSnapshot('../__snapshots__/openapi.json')
  })

  it('the record schemas never require an encrypted field (withheld without descifrar)', async () => {
    const doc = (await call(base, 'GET', '/docs')).body
    for (const m of registry.modules) {
      const schema = doc.components.schemas[`${m.name}Record`]
      const required: string[] = schema.required ?? []
      expect(required.filter((n) => m.fieldMap.get(n)?.encrypted === true), m.name).toEqual([])
      // declared order is kept: the serializer would otherwise move withheld-able fields last
      expect(Object.keys(schema.properties).slice(1, 1 + m.fields.filter((f) => f.type !== 'password').length))
        .toEqual(m.fields.filter((f) => f.type !== 'password').map((f) => f.name))
    }
  })
})

describe('a module added to modules.yaml', () => {
  const reg = parseRegistry(withObjetos, 'temp.yaml')
  const mod = reg.byName.get('objetos_perdidos')!
  let app: FastifyInstance
  let api: Api
  let personalId: string
  let id: string
  const year = new Intl.DateTimeFormat('en', { timeZone: 'Europe/Madrid', year: 'numeric' }).format(new Date())

  beforeAll(async () => {
    app = await h.app({ registry: reg })
    api = client(app, await login(app))
    const per = await api.post('/personal', sampleBody(reg.byName.get('personal')!, new Map()))
    expect(per.status, JSON.stringify(per.body)).toBe(201)
    personalId = per.body.data._id
  })

  it('is unknown to an instance started with the old file', async () => {
    expectError(await client(base, adminToken).get('/objetos_perdidos'), 'MODULO_NO_ENCONTRADO')
  })

  it('POST creates OBJ-YYYY-00001 with defaults and nulls (201)', async () => {
    const res = await api.post('/objetos_perdidos', { descripcion: 'Cartera marrón', entregado_por: personalId })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    id = res.body.data._id
    expect(id).toBe(`OBJ-${year}-00001`)
    expect(res.body.data).toMatchObject({ descripcion: 'Cartera marrón', estado: 'depositado', lugar_hallazgo: null, valor_estimado: null, entregado_por: personalId, _version: 1 })
    const second = await api.post('/objetos_perdidos', { descripcion: 'Llaves', valor_estimado: 5.5, estado: 'entregado' })
    expect(second.status, JSON.stringify(second.body)).toBe(201)
    expect(second.body.data._id).toBe(`OBJ-${year}-00002`)
  })

  it('validates against the new declaration (required, enum, ref, unknown field)', async () => {
    expectError(await api.post('/objetos_perdidos', { lugar_hallazgo: 'Plaza Mayor' }), 'DATOS_REQUERIDOS')
    expectError(await api.post('/objetos_perdidos', { descripcion: 'x', estado: 'perdido' }), 'DATOS_INVALIDOS')
    expectError(await api.post('/objetos_perdidos', { descripcion: 'x', entregado_por: `PER-${year}-99999` }), 'DATOS_INVALIDOS')
    expectError(await api.post('/objetos_perdidos', { descripcion: 'x', color: 'rojo' }), 'DATOS_INVALIDOS')
  })

  it('GET, PUT and list work', async () => {
    const got = await api.get(`/objetos_perdidos/${id}`)
    expect(got.status).toBe(200)
    expect(got.body.data._id).toBe(id)
    const put = await api.put(`/objetos_perdidos/${id}`, { lugar_hallazgo: 'Parque del Oeste', estado: 'entregado' })
    expect(put.status, JSON.stringify(put.body)).toBe(200)
    expect(put.body.data).toMatchObject({ lugar_hallazgo: 'Parque del Oeste', estado: 'entregado', _version: 2 })
    const list = await api.get('/objetos_perdidos?estado=entregado&sort=_id')
    expect(list.status).toBe(200)
    expect(list.body.data).toMatchObject({ total: 2, limit: 100, offset: 0 })
    expect(list.body.data.records.map((r: { _id: string }) => r._id)).toEqual([id, `OBJ-${year}-00002`])
  })

  it('DELETE soft-deletes it', async () => {
    const res = await api.del(`/objetos_perdidos/${id}`)
    expect(res.status).toBe(200)
    expectError(await api.get(`/objetos_perdidos/${id}`), 'REGISTRO_NO_ENCONTRADO')
    expect((await api.get('/objetos_perdidos')).body.data.total).toBe(1)
  })

  it('is stored in its own table, one column per field', async () => {
    const cols = await columnsOf('objetos_perdidos')
    for (const f of mod.fields) expect(cols.has(valueColumn(f)), f.name).toBe(true)
    for (const s of SYSTEM) expect(cols.has(s), s).toBe(true)
    expect(cols.get('descripcion')).toMatchObject({ data_type: 'character varying', character_maximum_length: 200 })
    expect(cols.get('valor_estimado')!.data_type).toBe('numeric')
    const rows = await h.db.query<{ _id: string, descripcion: string }>('select "_id", "descripcion" from "objetos_perdidos" order by "_id"')
    expect(rows).toEqual([{ _id: id, descripcion: 'Cartera marrón' }, { _id: `OBJ-${year}-00002`, descripcion: 'Llaves' }])
  })

  it('the role permissions declared for it apply (agente may create, consulta may not)', async () => {
    const agente = client(app, (await newUser(app, await login(app), 'agente')).token)
    const consulta = client(app, (await newUser(app, await login(app), 'consulta')).token)
    const created = await agente.post('/objetos_perdidos', { descripcion: 'Paraguas' })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect((await agente.get(`/objetos_perdidos/${created.body.data._id}`)).status).toBe(200)
    expectError(await agente.put(`/objetos_perdidos/${created.body.data._id}`, { lugar_hallazgo: 'x' }), 'SIN_PERMISOS')
    expectError(await consulta.get('/objetos_perdidos'), 'SIN_PERMISOS')
    expectError(await consulta.post('/objetos_perdidos', { descripcion: 'Gafas' }), 'SIN_PERMISOS')
  })

  it('appears in the OpenAPI document of the new instance', async () => {
    const doc = (await call(app, 'GET', '/docs')).body
    expect(Object.keys(doc.paths['/objetos_perdidos']).sort()).toEqual(['get', 'post'])
    expect(Object.keys(doc.paths['/objetos_perdidos/{id}']).sort()).toEqual(['delete', 'get', 'put'])
  })
})

let oldId: string

describe('a field added to an existing module', () => {
  it('gets its column and works, existing records read it as null', async () => {
    const admin = client(base, adminToken)
    const veh = registry.byName.get('vehiculos')!
    const old = await admin.post('/vehiculos', sampleBody(veh, new Map(), true))
    expect(old.status, JSON.stringify(old.body)).toBe(201)
    oldId = old.body.data._id
    expect((await columnsOf('vehiculos')).has('color')).toBe(false)
    const [document] = await documentsOf('vehiculos')

    const app = await h.app({ registry: parseRegistry(withColor, 'temp.yaml') })
    const api = client(app, await login(app))
    expect((await columnsOf('vehiculos')).get('color')).toMatchObject({ data_type: 'character varying', character_maximum_length: 30 })
    const res = await api.post('/vehiculos', { ...sampleBody(veh, new Map(), true), color: 'blanco' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.data.color).toBe('blanco')
    expect((await api.get(`/vehiculos/${res.body.data._id}`)).body.data.color).toBe('blanco')
    expect((await api.get('/vehiculos?color=blanco')).body.data.total).toBe(1)
    // The stored search document now holds the new field: a new column replaced the old one.
    expect(await documentsOf('vehiculos')).toEqual([expect.not.stringMatching(document!)])
    expect((await api.get('/vehiculos?q=blanco')).body.data.records.map((r: { _id: string }) => r._id)).toEqual([res.body.data._id])
    const before = await api.get(`/vehiculos/${oldId}`)
    expect(before.body.data).toMatchObject({ _id: oldId, color: null, _version: 1 })
    const put = await api.put(`/vehiculos/${oldId}`, { color: 'azul' })
    expect(put.status, JSON.stringify(put.body)).toBe(200)
    expect(put.body.data).toMatchObject({ color: 'azul', _version: 2 })
    expectError(await api.put(`/vehiculos/${oldId}`, { color: 'x'.repeat(31) }), 'DATOS_INVALIDOS')
  })
})

describe('a destructive change to modules.yaml', () => {
  const snapshot = async (): Promise<unknown> => ({
    rows: await h.db.query('select * from "vehiculos" order by "_id"'),
    columns: [...(await columnsOf('vehiculos')).entries()].sort(([a], [b]) => a.localeCompare(b)),
  })

  async function refused (text: string): Promise<string> {
    const before = await snapshot()
    const err = await h.app({ registry: parseRegistry(text, 'temp.yaml') }).then(() => undefined, (e: unknown) => e)
    expect(err).toBeInstanceOf(ConfigError)
    expect(await snapshot()).toEqual(before)
    return (err as ConfigError).message
  }

  it('a removed field is refused, naming the drop column statement; data untouched', async () => {
    const message = await refused(vehiculos('      marca: { type: string, label: Marca }\n', ''))
    expect(message).toMatch(/refus/i)
    expect(message).toMatch(/drop column "marca"/i)
    expect(message).not.toMatch(/drop column "(modelo|color)"/i)
  })

  it('a field changed from string to integer is refused, naming the statement; data untouched', async () => {
    const message = await refused(vehiculos('      modelo: { type: string,', '      modelo: { type: integer,'))
    expect(message).toMatch(/refus/i)
    expect(message).toMatch(/alter column "modelo" type int/i)
  })

  it('a shorter max_length is refused too (values could be cut)', async () => {
    const message = await refused(vehiculos('max_length: 30', 'max_length: 3'))
    expect(message).toMatch(/refus/i)
    expect(message).toMatch(/"color"/)
  })

  it('a type change of a field the search document reads names statements that run as listed', async () => {
    const message = await refused(vehiculos('      color: { type: string, max_length: 30 }\n', '      color: { type: text }\n'))
    // PostgreSQL refuses a type change under a generated column: the document is dropped first (the next start adds it back).
    expect(message).toMatch(/--apply 'alter table "vehiculos" drop column "_search_[0-9a-f]{8}";'[^]*alter column "color" type text/)
    const statements = [...message.matchAll(/--apply '([^']+);'/g)].map((m) => m[1]!)
    await h.db.query('begin')
    try {
      for (const st of statements) await h.db.query(st)
    } finally {
      await h.db.query('rollback')
    }
  })

  it('a renamed field is refused with the rename statement and a command that reaches this database; no raw SQL error, data untouched', async () => {
    const current = await h.app({ registry: parseRegistry(withColor, 'temp.yaml') })
    const put = await client(current, await login(current)).put(`/vehiculos/${oldId}`, { modelo: 'Golf' })
    expect(put.status, JSON.stringify(put.body)).toBe(200)
    await h.closeApp(current)
    const message = await refused(vehiculos('      modelo: { type: string,', '      modelo_x: { type: string,'))
    expect(message).toMatch(/renames a field, which the start does not do by itself[^]*refusing to start/)
    expect(message).toContain('vehiculos: column "modelo" has no field any more and "modelo_x" is new')
    expect(message).toContain(`npm run migrate -- --apply 'ALTER TABLE "vehiculos" RENAME COLUMN "modelo" TO "modelo_x";'`)
    expect(message).toMatch(/stored version\(s\) of records hold a value under "modelo"[^]*\/verificar reports those records as broken/)
    if (usingPostgres) expect(message).toContain('psql "$DATABASE_URL"')
    else expect(message).toMatch(/[Ss]top the service first \(Ctrl-C on npm start/)
    expect(message).not.toMatch(/does not exist/)
  })

  it('a rename together with another change of the field (MikroORM plans an add and a drop) is refused as a rename too', async () => {
    const message = await refused(vehiculos('      modelo: { type: string,', '      modelo_x: { type: string, max_length: 40,'))
    expect(message).toContain('RENAME COLUMN "modelo" TO "modelo_x"')
  })

  it('a renamed encrypted field that holds values is refused without a rename statement: its values would no longer decrypt', async () => {
    const admin = client(base, adminToken)
    const per = await admin.post('/personal', sampleBody(registry.byName.get('personal')!, new Map()))
    expect(per.status, JSON.stringify(per.body)).toBe(201)
    const message = await refused(edit(withColor, '      nif: {', '      nif_agente: {'))
    expect(message).toContain('personal: column "nif" has no field any more and "nif_agente" is new')
    expect(message).toMatch(/encrypted field[^]*would decrypt[^]*Do not rename the column/)
    expect(message).toContain('personal.descifrar')
    expect(message).not.toContain('RENAME COLUMN')
  })

  it('a rename run as the refusal says: the next start finishes it (indexes, search document), values read under the new name', async () => {
    const renamed = edit(withColor, '      matricula: {', '      matricula_nueva: {')
    const message = await refused(renamed)
    const statements = [...message.matchAll(/--apply '([^']+);'/g)].map((m) => m[1]!)
    expect(statements).toEqual(['ALTER TABLE "vehiculos" RENAME COLUMN "matricula" TO "matricula_nueva"'])
    const old = await h.db.query<{ matricula: string }>('select "matricula" from "vehiculos" where "_id" = $1', [oldId])
    for (const st of statements) await h.db.query(st)
    try {
      const app = await h.app({ registry: parseRegistry(renamed, 'temp.yaml') })
      expect(await planSchema(app.orm)).toEqual({ safe: [], destructive: [], renames: [] })
      const api = client(app, await login(app))
      expect((await api.get(`/vehiculos/${oldId}`)).body.data.matricula_nueva).toBe(old[0]!.matricula)
      expect((await api.get(`/vehiculos?matricula_nueva=${encodeURIComponent(old[0]!.matricula)}`)).body.data.total).toBe(1)
      await h.closeApp(app)
    } finally {
      await h.db.query('ALTER TABLE "vehiculos" RENAME COLUMN "matricula_nueva" TO "matricula"')
    }
  })

  it('a field made required while records hold nulls in it starts (no table change); those records stay readable and writable', async () => {
    const app = await h.app({ registry: parseRegistry(edit(withColor, '      bastidor: { type: string, unique: true,', '      bastidor: { type: string, required: true, unique: true,'), 'temp.yaml') })
    const api = client(app, await login(app))
    expect((await api.get(`/vehiculos/${oldId}`)).body.data).toMatchObject({ bastidor: null })
    const put = await api.put(`/vehiculos/${oldId}`, { km_actuales: 10 })
    expect(put.status, JSON.stringify(put.body)).toBe(200)
    expectError(await api.put(`/vehiculos/${oldId}`, { bastidor: null }), 'DATOS_REQUERIDOS')
    await h.closeApp(app)
  })

  it('the data stays readable by an instance on the matching file', async () => {
    const app = await h.app({ registry: parseRegistry(withColor, 'temp.yaml') })
    const res = await client(app, await login(app)).get(`/vehiculos/${oldId}`)
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ color: 'azul', modelo: 'Golf', km_actuales: 10, _version: 4 })
  })

  it('a longer max_length is additive: the column widens by itself, values kept', async () => {
    const app = await h.app({ registry: parseRegistry(vehiculos('max_length: 30', 'max_length: 60'), 'temp.yaml') })
    expect((await columnsOf('vehiculos')).get('color')).toMatchObject({ character_maximum_length: 60 })
    const api = client(app, await login(app))
    const res = await api.get(`/vehiculos/${oldId}`)
    expect(res.body.data).toMatchObject({ color: 'azul' })
    // PostgreSQL cannot change the type of a column the stored search
    // document reads: the sync dropped the document, widened, added it back.
    expect(await documentsOf('vehiculos')).toHaveLength(1)
    expect((await api.get('/vehiculos?q=azul')).body.data.records.map((r: { _id: string }) => r._id)).toEqual([oldId])
  })
})

describe('the stored search document follows the text fields', () => {
  it('a text field added and a max_length grown in one start: rebuilt once, q finds the new field, the next start plans nothing', async () => {
    const text = edit(vehiculos('      color: { type: string, max_length: 30 }\n', '      color: { type: string, max_length: 90 }\n      acabado: { type: string }\n'),
      'full_text: [color]', 'full_text: [color, acabado]')
    const before = await documentsOf('vehiculos')
    const app = await h.app({ registry: parseRegistry(text, 'temp.yaml') })
    const after = await documentsOf('vehiculos')
    expect(after).toHaveLength(1)
    expect(after).not.toEqual(before)
    expect((await columnsOf('vehiculos')).get('color')).toMatchObject({ character_maximum_length: 90 })
    const api = client(app, await login(app))
    expect((await api.put(`/vehiculos/${oldId}`, { acabado: 'Metalizado' })).status).toBe(200)
    expect((await api.get('/vehiculos?q=metalizado')).body.data.records.map((r: { _id: string }) => r._id)).toEqual([oldId])
    expect((await api.get('/vehiculos?q=azul')).body.data.records.map((r: { _id: string }) => r._id)).toEqual([oldId])
    expect(await planSchema(app.orm)).toEqual({ safe: [], destructive: [], renames: [] })
  })
})

describe('long table and field names', () => {
  // Index names built from them pass PostgreSQL's 63 bytes; it keeps 63 and drops the rest,
  // where `<table>_<col>_live_idx` and `<table>_<col>_count_idx` would become one name.
  const text = vehiculos('      color: { type: string, max_length: 30 }\n', '      color: { type: string, max_length: 90 }\n      acabado: { type: string }\n') + `
  inventario_de_material_incautado_en_diligencias:
    prefix: IMI
    label: Inventario de material incautado
    fields:
      descripcion_del_objeto_intervenido: { type: string, required: true, indexed: true, contains_index: true }
      observaciones_de_la_cadena_de_custodia: { type: text, indexed: true, contains_index: true }
      numero_de_precinto_de_la_bolsa_de_pruebas: { type: string, unique: true, contains_index: true }
`
  it('start twice on the same database: every index and constraint is built once under its own name, the next start plans nothing', async () => {
    const reg = parseRegistry(text, 'temp.yaml')
    const app = await h.app({ registry: reg })
    const names = (await h.db.query<{ name: string }>(
      "select indexname as name from pg_indexes where tablename = 'inventario_de_material_incautado_en_diligencias' and schemaname = current_schema()")).map((r) => r.name)
    // the live and count index of each field, the trigram and vacio indexes, the unique one, the system ones
    expect(names.length).toBeGreaterThanOrEqual(12)
    expect(new Set(names).size).toBe(names.length)
    for (const name of names) expect(Buffer.byteLength(name), name).toBeLessThanOrEqual(63)
    expect(await planSchema(app.orm)).toEqual({ safe: [], destructive: [], renames: [] })
    await h.closeApp(app)
    const again = await h.app({ registry: parseRegistry(text, 'temp.yaml') })
    expect(await planSchema(again.orm)).toEqual({ safe: [], destructive: [], renames: [] })
    const api = client(again, await login(again))
    const body = { descripcion_del_objeto_intervenido: 'Navaja', numero_de_precinto_de_la_bolsa_de_pruebas: 'P-1' }
    const id = (await api.post('/inventario_de_material_incautado_en_diligencias', body)).body.data._id as string
    expect(id).toMatch(/^IMI-\d{4}-00001$/)
    // the unique constraint holds under its shortened name
    expectError(await api.post('/inventario_de_material_incautado_en_diligencias', { ...body, descripcion_del_objeto_intervenido: 'Otra' }), 'REGISTRO_DUPLICADO')
    const list = await api.get('/inventario_de_material_incautado_en_diligencias?descripcion_del_objeto_intervenido=Navaja')
    expect(list.body.data.total).toBe(1)
    expect((await api.get('/inventario_de_material_incautado_en_diligencias?descripcion_del_objeto_intervenido[contiene]=NAVA')).body.data.total).toBe(1)
  })
})
