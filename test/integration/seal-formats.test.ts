/**
 * A change to modules.yaml that the service accepts never invalidates a
 * stored hash (docs/operator-guide.md "The hash chain"). Records
 * sealed by the service before seal format 2 (test/fixtures/seal-v1.json,
 * made by make-seal-v1-fixture.ts on that code) and records sealed now both
 * verify — in /verificar and in the auditor's own script — after the
 * upgrade and after a restart on a modules.yaml with new fields, a new
 * module, a new enum value and a longer string, and a module's first
 * encrypted field; tampering still shows under every format. Format 3
 * (modules with encrypted fields) keeps `_hash` from telling a reader
 * which encrypted fields are empty; format 4 (encrypted sub-fields of
 * structured arrays, denuncias) too.
 */
import { execFile } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import type { ModuleDef, Registry } from '../../core/registry/types.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import { canonicalJson } from '../../core/canonical.js'
import { createFieldCipher } from '../../core/crypto.js'
import { sha256 } from '../../records/integrity/version-hash.js'
import { hashPayload } from '../../records/record-view.js'
import { createHarness, type Harness } from '../helpers/app.js'
import { client, login, ok, type Api } from '../helpers/http.js'
import { insertFromJson } from '../helpers/row-json.js'
import { edit } from '../helpers/edit-text.js'
import { rowHome, versionRow } from '../helpers/version-row.js'

type Rec = Record<string, any>
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const fixture = JSON.parse(readFileSync(new URL('../fixtures/seal-v1.json', import.meta.url), 'utf8')) as {
  tables: Record<string, Rec[]>, sys_historial: Rec[], sys_claves: Rec[]
}

const real = readFileSync(join(ROOT, 'modules.yaml'), 'utf8')
/** modules.yaml grown as the service accepts: new fields (one encrypted), a new module, new enum values, a longer string. */
function grown (): string {
  let t = real
  t = edit(t, '\n\n  sanciones:', '\n      expediente_judicial: { type: string, max_length: 40 }\n      denunciante_movil: { type: string, max_length: 30, encrypted: true }\n\n  sanciones:')
  t = edit(t, 'enum: [baja, media, alta, urgente], default: media', 'enum: [baja, media, alta, urgente, critica], default: media')
  t = edit(t, 'denunciante_email: { type: string, max_length: 254,', 'denunciante_email: { type: string, max_length: 320,')
  t = edit(t, '      resultado: { type: text, label: Resultado }\n', '      resultado: { type: text, label: Resultado }\n      prioridad_llamada: { type: integer, min: 1, max: 5 }\n')
  t = edit(t, 'enum: [urgente, normal, informacion]', 'enum: [urgente, normal, informacion, simulacro]')
  // A module's first encrypted field: its new versions are sealed in format 3, its old ones stay in 2.
  t = edit(t, '      fecha_itv: { type: date, label: Fecha de la ITV }\n', '      fecha_itv: { type: date, label: Fecha de la ITV }\n      propietario_dni: { type: string, max_length: 20, encrypted: true }\n')
  return `${t}
  objetos_perdidos:
    prefix: OBJ
    label: Objetos perdidos
    fields:
      descripcion: { type: string, required: true, max_length: 200 }
      valor_estimado: { type: decimal, min: 0 }
`
}

let h: Harness, app: FastifyInstance, api: Api, integrityKey: string, dir: string
let registry: Registry = loadRegistry(join(ROOT, 'modules.yaml'))
let modulesFile = join(ROOT, 'modules.yaml')
const mod = (name: string): ModuleDef => registry.byName.get(name)!

/** Closes the running instance and starts a new one on `reg` (as a deploy would). */
async function restart (reg: Registry, file: string): Promise<void> {
  if (app !== undefined) await h.closeApp(app)
  registry = reg
  modulesFile = file
  app = await h.app({ registry: reg })
  api = client(app, await login(app))
}

const historial = async (m: string, id: string): Promise<Rec[]> => ok(await api.get(`/${mod(m).path}/${id}/historial`)).versiones
const verificar = async (m: string, id: string): Promise<Rec> => ok(await api.get(`/${mod(m).path}/${id}/verificar`))
const sql = (text: string, params: unknown[] = []): Promise<Rec[]> => h.db.query(text, params)

/** Runs deploy/auditoria/verificar-cadena.mjs on the record's history as read now, with the modules.yaml in force. */
async function auditor (m: string, id: string): Promise<{ code: number, out: string }> {
  const file = join(dir, `${id}-${Date.now()}.json`)
  writeFileSync(file, JSON.stringify((await api.get(`/${mod(m).path}/${id}/historial`)).body))
  const args = ['deploy/auditoria/verificar-cadena.mjs', file, '--modulo', m, '--modulos', modulesFile, '--clave-integridad', integrityKey]
  return new Promise((resolve) => execFile(process.execPath, args, { cwd: ROOT }, (err, stdout, stderr) =>
    resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), out: stdout + stderr })))
}
async function expectSound (m: string, id: string): Promise<void> {
  expect(await verificar(m, id), `${m} ${id}`).toEqual({ valido: true })
  const versions = (await historial(m, id)).length
  const r = await auditor(m, id)
  expect([r.code, r.out.match(/: correct$/gm)?.length, r.out.includes('Chain intact.')], r.out).toEqual([0, versions, true])
}
async function expectBroken (m: string, id: string, version: number, auditorToo = true): Promise<void> {
  expect(await verificar(m, id), `${m} ${id}`).toMatchObject({ valido: false, version_rota: version, motivo: expect.any(String) })
  if (!auditorToo) return
  const r = await auditor(m, id)
  expect(r.code, r.out).toBe(1)
  expect(r.out).toMatch(new RegExp(`version ${version} \\([^)]*\\): DOES NOT MATCH`))
}

const OLD = Object.entries(fixture.tables).flatMap(([m, rows]) => rows.map((r) => [m, r._id as string] as const))
const fresh: Array<readonly [string, string]> = []

beforeAll(async () => {
  h = await createHarness()
  dir = mkdtempSync(join(tmpdir(), 'sellos-'))
  // The database as the service before format 2 left it: its keys, its rows,
  // and a history table without the `sello` column.
  await h.closeApp(await h.app())
  await sql('alter table sys_historial drop column sello')
  await sql('delete from sys_claves')
  for (const k of fixture.sys_claves) await sql('insert into sys_claves select * from jsonb_populate_record(null::sys_claves, $1::jsonb)', [JSON.stringify(k)])
  for (const [table, rows] of Object.entries(fixture.tables)) {
    for (const r of rows) await insertFromJson(sql, table, '$1::jsonb', [JSON.stringify(r)])
  }
  // Ids come from this database's own sequence, as they would after a restore.
  const cols = 'modulo, registro, version, accion, usuario, fecha, hash, campos, datos'
  for (const r of fixture.sys_historial) await sql(`insert into sys_historial (${cols}) select ${cols} from jsonb_populate_record(null::sys_historial, $1::jsonb)`, [JSON.stringify(r)])
  // The upgraded service starts: the schema sync adds `sello`, old rows read as 1.
  await restart(registry, modulesFile)
  integrityKey = (await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)).integrityKey.toString('base64')
})
afterAll(async () => { await h.close(); rmSync(dir, { recursive: true, force: true }) })

describe('records sealed before format 2 (fixture)', () => {
  it('show seal format 1 with every field declared then, and verify in /verificar and the auditor script', async () => {
    expect(OLD.length).toBe(4)
    for (const [m, id] of OLD) {
      const versions = await historial(m, id)
      expect(versions.length).toBe(fixture.sys_historial.filter((r) => r.registro === id).length)
      for (const v of versions) {
        expect(v.sello).toBe(1)
        expect([...v.campos_sellados].sort()).toEqual(mod(m).fields.map((f) => f.name).sort())
      }
      await expectSound(m, id)
    }
  })
})

describe('records sealed now (format 4 with encrypted sub-fields, 3 with encrypted fields, else 2)', () => {
  it('leave fields without a value out, name changed fields alike, and verify', async () => {
    const d = ok(await api.post('/denuncias', { denunciante_nombre: 'Eva Ruiz', denunciante_dni: '87654321X', tipo: 'robo', fecha_hechos: '2026-07-01 09:00:00', lugar_hechos: 'Estación', descripcion: 'Robo de bicicleta' }), 201)
    ok(await api.put(`/denuncias/${d._id}`, { denunciante_telefono: '611222333', observaciones: null }))
    ok(await api.del(`/denuncias/${d._id}`))
    ok(await api.post(`/denuncias/${d._id}/restaurar`))
    const s = ok(await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Ruido nocturno' }), 201)
    ok(await api.put(`/sala092/${s._id}`, { estado: 'en_curso', operador: 'OP-4' }))
    ok(await api.del(`/sala092/${s._id}`))
    const v = ok(await api.post('/vehiculos', { matricula: '9876XYZ', tipo: 'moto' }), 201)
    ok(await api.put(`/vehiculos/${v._id}`, { km_actuales: 10 }))
    fresh.push(['denuncias', d._id], ['sala092', s._id], ['vehiculos', v._id])
    const versions = await historial('denuncias', d._id)
    expect(versions.map((v) => [v.sello, v.campos_sellados, v.accion])).toEqual([[4, undefined, 'crear'], [4, undefined, 'editar'], [4, undefined, 'eliminar'], [4, undefined, 'restaurar']])
    expect((await historial('vehiculos', v._id)).map((x) => x.sello)).toEqual([2, 2])
    // The first version names the fields given a value; setting a null field to null changes nothing.
    expect([...versions[0]!.campos].sort()).toEqual(['denunciante_dni', 'denunciante_nombre', 'descripcion', 'estado', 'fecha_hechos', 'lugar_hechos', 'prioridad', 'tipo'])
    expect(versions[1]!.campos).toEqual(['denunciante_telefono'])
    for (const [m, id] of fresh) await expectSound(m, id)
  })
})

describe('format 3: _hash does not tell which encrypted fields are empty', () => {
  it("a reader's hypothesis \"every encrypted field is empty\" does not give _hash; the keyed _clave does, and both verifiers hold", async () => {
    const d = ok(await api.post('/denuncias', { denunciante_nombre: 'Sin Datos', tipo: 'otro', fecha_hechos: '2026-07-02 09:00:00', lugar_hechos: 'Calle', descripcion: 'Nada cifrado' }), 201)
    expect(mod('denuncias').fields.filter((f) => f.encrypted).every((f) => d[f.name] === null)).toBe(true)
    const [{ hash, sello }] = await sql('select hash, sello from sys_historial where registro = $1 and version = 1', [d._id]) as [Rec]
    // Its only version's stored row is the live row (docs/decisions.md "Each version stored once").
    const datos = await versionRow(sql, mod('denuncias').table, d._id, 1)
    expect([sello, hash]).toEqual([4, d._hash])
    const cipher = createFieldCipher(h.config.encryptionKeys, await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys))
    // What a reader without descifrar can build: every plain and system field, `_prev`, no encrypted field.
    const hypothesis = hashPayload(mod('denuncias'), datos, cipher, '', { format: 2 })
    expect(Object.keys(hypothesis).some((k) => mod('denuncias').fieldMap.get(k)?.encrypted === true)).toBe(false)
    expect(sha256(canonicalJson(hypothesis))).not.toBe(d._hash)
    // The same payload plus `_clave` (integrity key) is the hash.
    const clave = createHmac('sha256', Buffer.from(integrityKey, 'base64')).update(`sello\u0000${d._id}\u00001`, 'utf8').digest('hex')
    expect(sha256(canonicalJson({ ...hypothesis, _clave: clave }))).toBe(d._hash)
    await expectSound('denuncias', d._id)
    // The auditor's script cannot check format 3 or 4 (denuncias: encrypted sub-fields of testigos) without the integrity key: a usage error, not a verdict.
    const file = join(dir, `${d._id}-sin-clave.json`)
    writeFileSync(file, JSON.stringify((await api.get(`/denuncias/${d._id}/historial`)).body))
    const r = await new Promise<{ code: number, out: string }>((resolve) => execFile(process.execPath, ['deploy/auditoria/verificar-cadena.mjs', file, '--modulo', 'denuncias', '--modulos', modulesFile], { cwd: ROOT }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), out: stdout + stderr })))
    expect(r.code, r.out).toBe(2)
    expect(r.out).toContain('sealed in format 4')
    fresh.push(['denuncias', d._id])
  })
})

describe('after a restart on a grown modules.yaml', () => {
  beforeAll(async () => {
    const file = join(dir, 'modules.yaml')
    writeFileSync(file, grown())
    await restart(parseRegistry(grown(), file), file)
    expect(mod('denuncias').fieldMap.has('expediente_judicial') && mod('objetos_perdidos') !== undefined).toBe(true)
  })

  it('every stored record, of either format, still verifies', async () => {
    for (const [m, id] of [...OLD, ...fresh]) await expectSound(m, id)
  })

  it('a record updated under it (setting a new field) verifies, old versions keeping their format', async () => {
    const [old, now] = [OLD.find(([m]) => m === 'denuncias')!, fresh.find(([m]) => m === 'denuncias')!]
    for (const [, id] of [old, now]) {
      ok(await api.put(`/denuncias/${id}`, { expediente_judicial: 'PA-2026/117', denunciante_movil: '699000111', prioridad: 'critica' }))
      const last = (await historial('denuncias', id)).at(-1)!
      expect([last.sello, [...last.campos].sort()]).toEqual([4, ['denunciante_movil', 'expediente_judicial', 'prioridad']])
      await expectSound('denuncias', id)
    }
    expect((await historial('denuncias', old[1])).map((v) => v.sello)).toEqual([1, 1, 1, 1, 1, 4])
    // vehiculos gained its first encrypted field: the next version is format 3, the older ones still verify in 2.
    const veh = fresh.find(([m]) => m === 'vehiculos')![1]
    ok(await api.put(`/vehiculos/${veh}`, { propietario_dni: '12345678Z' }))
    expect((await historial('vehiculos', veh)).map((v) => v.sello)).toEqual([2, 2, 3])
    await expectSound('vehiculos', veh)
    const s = '092-2026-00002' // a live fixture record
    ok(await api.put(`/sala092/${s}`, { prioridad_llamada: 2, tipo_incidencia: 'simulacro' }))
    await expectSound('sala092', s)
    const o = ok(await api.post('/objetos_perdidos', { descripcion: 'Paraguas negro' }), 201)
    await expectSound('objetos_perdidos', o._id)
  })
})

describe('tampering still shows under both formats', () => {
  const table = (m: string): string => mod(m).table
  /** Runs `change`, expects the chain broken at `version`, undoes it, expects it sound again. */
  async function tamper (m: string, id: string, version: number, change: string, undo: string, auditorToo = true): Promise<void> {
    await sql(change, [id])
    try { await expectBroken(m, id, version, auditorToo) } finally { await sql(undo, [id]) }
    await expectSound(m, id)
  }

  it('a stored value of the live row', async () => {
    for (const [m, id] of [['denuncias', 'DEN-2026-00002'], ['denuncias', fresh[0]![1]]] as const) {
      const [{ v, n }] = await sql(`select lugar_hechos as v, "_version" as n from "${table(m)}" where "_id" = $1`, [id]) as [Rec]
      await tamper(m, id, n, `update "${table(m)}" set lugar_hechos = 'Otro sitio' where "_id" = $1`, `update "${table(m)}" set lugar_hechos = '${String(v)}' where "_id" = $1`, false)
    }
  })

  it('a value written into a column the version left out (a field declared later, or null)', async () => {
    // DEN-2026-00002 was sealed (format 1) before expediente_judicial existed; the fresh sala092 record (format 2) never had a resultado.
    await tamper('denuncias', 'DEN-2026-00002', 1, `update denuncias set expediente_judicial = 'X' where "_id" = $1`, 'update denuncias set expediente_judicial = null where "_id" = $1', false)
    const [m, id] = fresh[1]!
    await tamper(m, id, 3, `update sala092 set resultado = 'X' where "_id" = $1`, 'update sala092 set resultado = null where "_id" = $1', false)
  })

  it('a history snapshot: an edited value, a dropped null key, a changed seal format', async () => {
    // Version 2's row where it lives (test/helpers/version-row.ts): the fixture's own entry (`datos`, format 1), the fresh record's entry 3 (`anterior`).
    for (const [m, id, home] of [['sala092', '092-2026-00001', { at: 'history', version: 2, column: 'datos' }], [...fresh[1]!, { at: 'history', version: 3, column: 'anterior' }]] as const) {
      expect(await rowHome(sql, id, 2)).toEqual(home)
      const [col, where] = [home.column, `registro = $1 and version = ${home.version}`]
      const [{ datos }] = await sql(`select ${col} as datos from sys_historial where ${where}`, [id]) as [Rec]
      const put = `update sys_historial set ${col} = '${JSON.stringify(datos).replaceAll("'", "''")}'::jsonb where ${where}`
      await tamper(m, id, 2, `update sys_historial set ${col} = jsonb_set(${col}, '{descripcion}', '"Otra cosa"') where ${where}`, put)
      const entry = 'registro = $1 and version = 2'
      const [{ sello }] = await sql(`select sello from sys_historial where ${entry}`, [id]) as [Rec]
      // Format 1 seals the null fields too, so their keys in the snapshot count.
      if (sello === 1) await tamper(m, id, 2, `update sys_historial set ${col} = ${col} - 'resultado' where ${where}`, put)
      const other = ({ 1: 2, 2: 1, 3: 2 } as Record<number, number>)[Number(sello)]
      await tamper(m, id, 2, `update sys_historial set sello = ${other} where ${entry}`, `update sys_historial set sello = ${Number(sello)} where ${entry}`)
    }
  })
})
