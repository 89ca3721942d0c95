/**
 * The auditor's independent script on records whose personal data was
 * erased (docs/operator-guide.md "The hash chain", "Erasures"): from a
 * record's `historial` it recomputes every version, the erased ones as the
 * residues the certificate gives, and from the database it recomputes the
 * erasure's live row with its certificate; both pass, and both still catch
 * a change to what the erasure left.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadSystemKeys } from '../../db/system-keys.js'
import { TEST_KEY } from '../helpers/app.js'
import { client, ok } from '../helpers/http.js'
import { sealAll } from '../helpers/seal.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

let t: TestApp
let dir: string
let keys: { integrity: string, index: string }

function script (args: string[]): Promise<{ code: number, out: string }> {
  return new Promise((resolve) => execFile(process.execPath, ['deploy/auditoria/verificar-cadena.mjs', ...args], (e, stdout, stderr) =>
    resolve({ code: e === null ? 0 : Number((e as { code?: number }).code ?? 1), out: stdout + stderr })))
}

beforeAll(async () => {
  t = await startTestApp({ env: { CHECKPOINT_INTERVAL: '24h' } })
  const k = await loadSystemKeys(t.app.orm.em.fork(), t.h.config.encryptionKeys)
  keys = { integrity: k.integrityKey.toString('base64'), index: k.indexKey.toString('base64') }
  dir = mkdtempSync(join(tmpdir(), 'policia-erasure-'))
})
afterAll(async () => {
  await t?.h.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

it('passes an erased record from its history and from the database, and still catches a change to what is left', async () => {
  const dpo = await newUser(t.app, t.token, 'delegado_proteccion_datos')
  const id = ok(await t.admin.post('/denuncias', {
    denunciante_nombre: 'Begoña Núñez', denunciante_dni: '12345678Z', tipo: 'robo', fecha_hechos: '2026-03-01 10:30:00',
    lugar_hechos: 'Plaza Mayor', descripcion: 'Bicicleta', testigos: [{ nombre: 'Łukasz', dni: '00000000T', declaracion: 'Lo vio' }],
  }), 201)._id as string
  ok(await t.admin.put(`/denuncias/${id}`, { prioridad: 'alta' }))
  ok(await client(t.app, dpo.token).post(`/proteccion-datos/denuncias/${id}/suprimir`, { motivo: 'Plazo de conservación cumplido' }))

  const file = join(dir, 'h.json')
  writeFileSync(file, JSON.stringify((await t.admin.get(`/denuncias/${id}/historial`)).body))
  const history = (): Promise<{ code: number, out: string }> => script([file, '--modulo', 'denuncias', '--clave-integridad', keys.integrity])
  const intact = await history()
  expect(intact.code, intact.out).toBe(0)
  expect(intact.out).toMatch(/version 1 \(crear, [^)]*\): correct \(its personal data erased at version 3\)\nversion 2 \(editar, [^)]*\): correct \(its personal data erased at version 3\)\nversion 3 \(suprimir, [^)]*\): correct\nChain intact\./)
  // What the erasure left, changed in the history the auditor was handed: that version no longer matches.
  writeFileSync(file, readFileSync(file, 'utf8').replace('"prioridad":"media"', '"prioridad":"baja"'))
  expect((await history()).out).toMatch(/version 1 \([^)]*\): DOES NOT MATCH/)

  const { clave_publica: publicKey } = await sealAll(t.admin, t.h.db)
  const url = t.h.db.url ?? `postgres://postgres:postgres@localhost/postgres?host=${encodeURIComponent(t.h.db.embedded!.host)}`
  const database = (): Promise<{ code: number, out: string }> => script(['--db', url, '--puntos-control', t.h.config.checkpointDir, '--clave-publica', publicKey,
    '--modulos', 'modules.yaml', '--clave-cifrado', TEST_KEY, '--clave-indice', keys.index, '--clave-integridad', keys.integrity])
  const whole = await database()
  expect(whole.code, whole.out).toBe(0)
  expect(whole.out).toContain('Database intact against its checkpoints.')
  await t.h.db.query('update denuncias set lugar_hechos = $2 where "_id" = $1', [id, 'Otra plaza'])
  const edited = await database()
  expect(edited.code, edited.out).toBe(1)
  expect(edited.out).toContain(`denuncias ${id}: the live row's values do not give its _hash (version 3)`)
})
