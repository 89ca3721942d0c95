/**
 * Encrypted fields of every kind of value, not only text: a date-time, a
 * date, a number and an array declared `encrypted` in modules.yaml come back
 * as they were written (a date-time in the service zone), are never stored
 * in clear, verify in /verificar and in the auditor's script, and a
 * `default: now` date-time is the clock, also when encrypted.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { parseRegistry } from '../../core/registry/load.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import type { Harness } from '../helpers/app.js'
import type { Api } from '../helpers/http.js'
import { startTestApp } from '../helpers/test-app.js'

const ROOT = resolve(import.meta.dirname, '../..')
const text = readFileSync(join(ROOT, 'modules.yaml'), 'utf8')
  // An encrypted date cannot be what the retention review counts from (core/registry/retention.ts).
  .replace('conservacion: { años: 2, desde: fecha_hora_entrada, estados: [resuelta] }', 'conservacion: { años: 2, estados: [resuelta] }')
  .replace('      fecha_hora_entrada: { type: datetime, default: now, label: Fecha y hora de entrada }', '      fecha_hora_entrada: { type: datetime, default: now, encrypted: true }\n      km: { type: integer, encrypted: true }\n      dia: { type: date, encrypted: true }\n      notas: { type: array, encrypted: true }')
const registry = parseRegistry(text, 'modules.yaml (encrypted kinds)')

let h: Harness, app: FastifyInstance, api: Api
let dir: string
let modulesFile: string

beforeAll(async () => {
  ({ h, app, admin: api } = await startTestApp({ registry }))
  dir = mkdtempSync(join(tmpdir(), 'cifrado-'))
  modulesFile = join(dir, 'modules.yaml')
  writeFileSync(modulesFile, text)
})
afterAll(async () => { await h.close(); rmSync(dir, { recursive: true, force: true }) })

describe('encrypted values that are not text', () => {
  it('read back as written, are stored only as ciphertext, and verify', async () => {
    expect(registry.byName.get('sala092')!.fieldMap.get('fecha_hora_entrada')!.encrypted).toBe(true)
    const body = { tipo_incidencia: 'normal', descripcion: 'Cifrados', fecha_hora_entrada: '2026-06-01T10:00:00Z', km: 1234, dia: '2026-02-28', notas: ['uno', { a: 1 }] }
    const created = await api.post('/sala092', body)
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const expected = { fecha_hora_entrada: '2026-06-01 12:00:00', km: 1234, dia: '2026-02-28', notas: ['uno', { a: 1 }] }
    expect(created.body.data).toMatchObject(expected)
    const id = created.body.data._id as string
    expect((await api.get(`/sala092/${id}`)).body.data).toMatchObject(expected)
    const [row] = await h.db.query<Record<string, string>>('select fecha_hora_entrada, km, dia, notas from sala092 where "_id" = $1', [id])
    for (const v of Object.values(row!)) {
      // Nothing but the envelope; the clear text is looked for in the decoded bytes, since base64 text may hold "uno" by chance.
      const parts = /^v1:[0-9a-f]{8}:([A-Za-z0-9+/]+={0,2}):([A-Za-z0-9+/]+={0,2})$/.exec(v)
      expect(parts, v).not.toBeNull()
      expect(Buffer.from(parts![2]!, 'base64').toString('latin1')).not.toMatch(/2026|1234|uno/)
    }
    expect((await api.put(`/sala092/${id}`, { km: 1300 })).body.data).toMatchObject({ ...expected, km: 1300 })
    expect((await api.get(`/sala092/${id}/verificar`)).body.data).toEqual({ valido: true })

    const file = join(dir, 'h.json')
    writeFileSync(file, JSON.stringify((await api.get(`/sala092/${id}/historial`)).body))
    const key = (await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)).integrityKey.toString('base64')
    const out = await new Promise<{ code: number, text: string }>((done) => execFile(process.execPath,
      ['deploy/auditoria/verificar-cadena.mjs', file, '--modulo', 'sala092', '--modulos', modulesFile, '--clave-integridad', key],
      { cwd: ROOT }, (err, stdout, stderr) => done({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), text: stdout + stderr })))
    expect([out.code, out.text.includes('Chain intact.')], out.text).toEqual([0, true])
  })

  it('an encrypted date-time with default now holds the clock', async () => {
    const before = Date.now()
    const res = await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Ahora' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const shown = res.body.data.fecha_hora_entrada as string
    expect(shown).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    const [stored] = await h.db.query<{ f: string }>('select fecha_hora_entrada as f from sala092 where "_id" = $1', [res.body.data._id])
    expect(stored!.f).toMatch(/^v1:/)
    expect(Math.abs(new Date(Date.parse(shown.replace(' ', 'T') + 'Z')).getTime() - before)).toBeLessThan(3 * 3600_000)
  })
})
