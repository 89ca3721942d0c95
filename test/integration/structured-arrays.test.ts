/**
 * Structured arrays (docs/user-guide.md "Structured arrays"): the default
 * modules.yaml declares `denuncias.testigos` items, validated like fields
 * (400 naming `testigos[0].nombre`), their dni, telefono and domicilio
 * encrypted value by value in the database, shown to callers with
 * `descifrar`, withheld from the others (`_restringidos` names
 * `testigos.dni`), logged in the read log; new records seal in format 4
 * and verify; a record stored before the declaration (plaintext items, in
 * its own seal format) still reads and verifies.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { parseRegistry } from '../../core/registry/load.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import type { Harness } from '../helpers/app.js'
import { client, login, ok, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'
import { edit } from '../helpers/edit-text.js'

type Rec = Record<string, any>
const ENCRYPTED = ['testigos.dni', 'testigos.telefono', 'testigos.domicilio']

let h: Harness, app: FastifyInstance, token: string
let jefe: Api, consulta: Api, agente: Api, jefeId: string

const base = {
  denunciante_nombre: 'Ana Pérez', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Sustracción de cartera',
}
const LUIS = { nombre: 'Luis Gil', dni: '12345678Z', telefono: '600111222', domicilio: 'Calle Real 1', declaracion: 'Vio a dos personas huir' }
const EVA = { nombre: 'Eva Ruiz', telefono: '600333444' }

async function users (a: FastifyInstance, adminToken: string): Promise<void> {
  const j = await newUser(a, adminToken, 'jefe')
  jefe = client(a, j.token)
  jefeId = j.id
  consulta = client(a, (await newUser(a, adminToken, 'consulta')).token)
  agente = client(a, (await newUser(a, adminToken, 'agente')).token)
}

const stored = async (id: string): Promise<string> =>
  JSON.stringify((await h.db.query<{ t: unknown }>('select testigos as t from denuncias where _id = $1', [id]))[0]!.t)
const reads = (id: string): Promise<Rec[]> =>
  h.db.query('select usuario, campos, ruta from sys_lecturas where registro = $1 order by id', [id])

beforeAll(async () => {
  ({ h, app, token } = await startTestApp())
  await users(app, token)
})
afterAll(async () => { await h.close() })

describe('validation of items', () => {
  it('a missing required sub-field: 400 Datos requeridos naming testigos[0].nombre', async () => {
    const res = await jefe.post('/denuncias', { ...base, testigos: [{ dni: '12345678Z' }] })
    expectError(res, 'DATOS_REQUERIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'testigos[0].nombre', mensaje: 'es obligatorio' }])
    const nulled = await jefe.post('/denuncias', { ...base, testigos: [LUIS, { nombre: null }] })
    expectError(nulled, 'DATOS_REQUERIDOS')
    expect(nulled.body.detalles).toEqual([{ campo: 'testigos[1].nombre', mensaje: 'es obligatorio' }])
  })

  it('a wrong type, an unknown sub-field, a bad DNI, a text item: 400 naming the path; nothing stored', async () => {
    const count = async (): Promise<number> => (await h.db.query<{ n: number }>('select count(*)::int as n from denuncias'))[0]!.n
    const before = await count()
    const cases: Array<[unknown[], string, string | RegExp]> = [
      [[{ nombre: 7 }], 'testigos[0].nombre', 'debe ser de tipo texto'],
      [[LUIS, { nombre: 'X', edad: 40 }], 'testigos[1].edad', 'no es un campo de este módulo'],
      [[LUIS, LUIS, { nombre: 'X', dni: '12345678A' }], 'testigos[2].dni', 'letra de control incorrecta'],
      [[{ nombre: 'X', dni: '1234-5678' }], 'testigos[0].dni', 'no tiene el formato esperado'],
      [['Luis'], 'testigos[0]', 'debe ser de tipo objeto'],
      [[{ nombre: 'x'.repeat(201) }], 'testigos[0].nombre', 'admite como máximo 200 caracteres'],
      [[{ nombre: 'Bell\u0007' }], 'testigos[0].nombre', 'contiene caracteres de control o texto mal formado'],
    ]
    for (const [testigos, campo, mensaje] of cases) {
      const res = await jefe.post('/denuncias', { ...base, testigos })
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles, JSON.stringify(testigos)).toEqual([{ campo, mensaje }])
    }
    const d = ok(await jefe.post('/denuncias', base), 201)
    const upd = await jefe.put(`/denuncias/${d._id}`, { testigos: [{ nombre: 'X', dni: '12345678A' }] })
    expectError(upd, 'DATOS_INVALIDOS')
    expect(upd.body.detalles).toEqual([{ campo: 'testigos[0].dni', mensaje: 'letra de control incorrecta' }])
    expect(await count()).toBe(before + 1)
  })

  it('a DNI is stored trimmed in upper case; null optional sub-fields are left out', async () => {
    const d = ok(await jefe.post('/denuncias', { ...base, testigos: [{ nombre: 'Ana', dni: ' 12345678z', telefono: null }] }), 201)
    expect(d.testigos).toEqual([{ nombre: 'Ana', dni: '12345678Z' }])
  })
})

describe('encrypted sub-fields', () => {
  let id: string

  beforeAll(async () => {
    id = ok(await agente.post('/denuncias', { ...base, testigos: [LUIS, EVA] }), 201)._id
  })

  it('are stored encrypted, value by value: no plaintext in the row or its history', async () => {
    const row = await stored(id)
    for (const secret of ['12345678Z', '600111222', 'Calle Real 1', '600333444']) expect(row).not.toContain(secret)
    expect(row).toContain('Luis Gil')
    expect(row).toContain('Vio a dos personas huir')
    const items = JSON.parse(row) as Rec[]
    expect(items[0]!.dni).toMatch(/^v1:[0-9a-f]{8}:/)
    expect(Object.keys(items[1]!).sort()).toEqual(['nombre', 'telefono'])
    // Its history holds this version's row once the record is updated (docs/decisions.md "Each version stored once"): checked below.
  })

  it('an agente who wrote them reads them back (its own record); consulta does not: withheld and named in _restringidos', async () => {
    const res = await agente.post('/denuncias', { ...base, testigos: [LUIS] })
    const created = ok(res, 201)
    expect(created.testigos).toEqual([LUIS])
    expect(created._restringidos).toBeUndefined()
    expect(ok(await agente.get(`/denuncias/${id}`)).testigos).toEqual([LUIS, EVA])
    const seen = ok(await consulta.get(`/denuncias/${id}`))
    expect(seen.testigos).toEqual([{ nombre: 'Luis Gil', declaracion: 'Vio a dos personas huir' }, { nombre: 'Eva Ruiz' }])
    expect(seen._restringidos).toEqual(['denunciante_dni', 'denunciante_telefono', 'denunciante_domicilio', ...ENCRYPTED])
    const list = ok(await consulta.get(`/denuncias?_id=${id}`))
    expect(list.records[0].testigos).toEqual(seen.testigos)
    // The agente's reads are logged (its creation's answer, its GET); consulta's, which decrypted nothing, are not.
    expect((await reads(id)).map((r) => r.ruta)).toEqual(['POST /denuncias', 'GET /denuncias/:id'])
  })

  it('jefe sees them decrypted, without _restringidos, and each read is logged naming the sub-fields shown', async () => {
    const seen = ok(await jefe.get(`/denuncias/${id}`))
    expect(seen.testigos).toEqual([LUIS, EVA])
    expect(seen._restringidos).toBeUndefined()
    const log = (await reads(id)).filter((r) => r.usuario === jefeId)
    expect(log).toHaveLength(1)
    expect(log[0]!.campos).toEqual(ENCRYPTED)
    expect(log[0]!.ruta).toBe('GET /denuncias/:id')
    // Only the sub-fields that hold a value are named.
    const eva = ok(await jefe.post('/denuncias', { ...base, testigos: [EVA] }), 201)
    expect((await reads(eva._id))[0]!.campos).toEqual(['testigos.telefono'])
  })

  it('an update re-encrypts the new items; history and verificar hold (seal format 4)', async () => {
    const upd = ok(await jefe.put(`/denuncias/${id}`, { testigos: [EVA, { ...LUIS, telefono: '699000000' }] }))
    expect(upd.testigos[1].telefono).toBe('699000000')
    expect(await stored(id)).not.toContain('699000000')
    // Version 1's row, now in the history (entry 2's `anterior`): its items still encrypted, value by value.
    const history = JSON.stringify(await h.db.query('select datos, anterior from sys_historial where registro = $1', [id]))
    expect(history).toContain('Luis Gil')
    for (const secret of ['12345678Z', '600111222', 'Calle Real 1', '600333444']) expect(history).not.toContain(secret)
    const hist = ok(await jefe.get(`/denuncias/${id}/historial`)).versiones
    expect(hist.map((v: Rec) => [v._version, v.sello, v.campos])).toEqual([[1, 4, expect.arrayContaining(['testigos'])], [2, 4, ['testigos']]])
    expect(hist[0].registro.testigos).toEqual([LUIS, EVA])
    const masked = ok(await consulta.get(`/denuncias/${id}/historial`)).versiones
    expect(masked[1].registro.testigos).toEqual([{ nombre: 'Eva Ruiz' }, { nombre: 'Luis Gil', declaracion: 'Vio a dos personas huir' }])
    expect(ok(await consulta.get(`/denuncias/${id}/verificar`))).toEqual({ valido: true })
  })

  it("the auditor's script recomputes the format-4 chain from the history a jefe reads", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'testigos-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'h.json')
    writeFileSync(file, JSON.stringify((await jefe.get(`/denuncias/${id}/historial`)).body))
    const key = (await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)).integrityKey.toString('base64')
    const run = (): Promise<string> => new Promise((resolve) => execFile(process.execPath, ['deploy/auditoria/verificar-cadena.mjs', file, '--modulo', 'denuncias', '--clave-integridad', key],
      (err, stdout, stderr) => resolve(`${err === null ? 0 : 1} ${stdout}${stderr}`)))
    expect(await run()).toMatch(/^0 [^]*version 2 \(editar, [^)]*\): correct\nChain intact\.$/m)
    // A witness's telephone changed in the history the auditor was handed: that version no longer matches.
    writeFileSync(file, readFileSync(file, 'utf8').replace('699000000', '699000001'))
    expect(await run()).toMatch(/version 2 \([^)]*\): DOES NOT MATCH/)
  })

  it('a ciphertext moved to another item or record breaks verificar', async () => {
    const other = ok(await jefe.post('/denuncias', { ...base, testigos: [{ nombre: 'A', dni: '00000000T' }, { nombre: 'B', dni: '00000001R' }] }), 201)
    const items = JSON.parse(await stored(other._id)) as Rec[]
    ;[items[0]!.dni, items[1]!.dni] = [items[1]!.dni, items[0]!.dni]
    await h.db.query('update denuncias set testigos = $1::jsonb where _id = $2', [JSON.stringify(items), other._id])
    expect(ok(await jefe.get(`/denuncias/${other._id}/verificar`))).toMatchObject({ valido: false, version_rota: 1 })
  })
})

describe('a record stored before testigos declared its items', () => {
  let oldId: string
  const OLD_ITEMS = ['Vecina del 3.º B', { nombre: 'Eva', dni: '12345678Z', telefono: '600333444' }]

  beforeAll(async () => {
    // The service as it was: testigos a free array, its items stored and sealed as sent.
    const real = readFileSync('modules.yaml', 'utf8')
    const before = parseRegistry(edit(real, real.match(/ {6}testigos:\n( {8}.*\n)+/)![0], '      testigos: { type: array }\n'), 'modules.yaml')
    // That release had no index of the witnesses' DNIs (records/item-index.ts): its start would refuse to drop it.
    await h.db.query('alter table denuncias drop column testigos_bidx')
    const oldApp = await h.app({ registry: before })
    const oldAdmin = client(oldApp, await login(oldApp))
    oldId = ok(await oldAdmin.post('/denuncias', { ...base, testigos: OLD_ITEMS }), 201)._id
    ok(await oldAdmin.put(`/denuncias/${oldId}`, { observaciones: 'Revisado' }))
    await h.closeApp(oldApp)
    await h.db.query('alter table denuncias add column testigos_bidx jsonb')
    expect(await stored(oldId)).toContain('600333444')
  })

  it('still verifies, and its history keeps its seal formats', async () => {
    expect(ok(await jefe.get(`/denuncias/${oldId}/verificar`))).toEqual({ valido: true })
    const hist = ok(await jefe.get(`/denuncias/${oldId}/historial`)).versiones
    expect(hist.map((v: Rec) => v.sello)).toEqual([3, 3])
    expect(hist[1].registro.testigos).toEqual(OLD_ITEMS)
  })

  it('shows its plaintext items as stored to jefe (logged) and withholds the declared encrypted sub-fields from consulta', async () => {
    expect(ok(await jefe.get(`/denuncias/${oldId}`)).testigos).toEqual(OLD_ITEMS)
    expect((await reads(oldId)).at(-1)!.campos).toEqual(['testigos.dni', 'testigos.telefono'])
    expect(ok(await consulta.get(`/denuncias/${oldId}`)).testigos).toEqual(['Vecina del 3.º B', { nombre: 'Eva' }])
    expect(ok(await consulta.get(`/denuncias/${oldId}/historial`)).versiones[0].registro.testigos).toEqual(['Vecina del 3.º B', { nombre: 'Eva' }])
  })

  it('an edit that leaves testigos alone seals format 4 and verifies; rewriting testigos encrypts them', async () => {
    ok(await jefe.put(`/denuncias/${oldId}`, { prioridad: 'alta' }))
    expect(ok(await jefe.get(`/denuncias/${oldId}/verificar`))).toEqual({ valido: true })
    ok(await jefe.put(`/denuncias/${oldId}`, { testigos: [{ nombre: 'Eva', dni: '12345678Z', telefono: '600333444' }] }))
    expect(await stored(oldId)).not.toContain('600333444')
    expect(ok(await jefe.get(`/denuncias/${oldId}/verificar`))).toEqual({ valido: true })
    const hist = ok(await jefe.get(`/denuncias/${oldId}/historial`)).versiones
    expect(hist.map((v: Rec) => [v.sello, v.campos])).toEqual([[3, expect.any(Array)], [3, ['observaciones']], [4, ['prioridad']], [4, ['testigos']]])
  })
})

describe('the OpenAPI document', () => {
  it('describes the items in the create, update and record schemas', async () => {
    const doc = (await client(app).get('/docs/json')).body
    const create = doc.paths['/denuncias'].post.requestBody.content['application/json'].schema
    const items = create.properties.testigos.items
    expect(items).toMatchObject({ type: 'object', additionalProperties: false, required: ['nombre'] })
    expect(Object.keys(items.properties)).toEqual(['nombre', 'dni', 'telefono', 'domicilio', 'declaracion'])
    expect(JSON.stringify(doc.components.schemas.denunciasRecord.properties.testigos)).toContain('declaracion')
  })
})
