/**
 * Tampering with stored evidence files (docs/user-guide.md "Evidence
 * files"): one byte changed, two files swapped, one deleted, for plain
 * (content-addressed) and encrypted files, in a directory and in an S3
 * bucket (altered there through the S3 API); /verificar rehashes every
 * file any version names and reports the first that does not hold, and so
 * does the auditor's script on a local copy of the store.
 */
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { MOTIVOS } from '../../core/errors.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import { TEST_KEY } from '../helpers/app.js'
import type { Harness } from '../helpers/app.js'
import { ok, type Api } from '../helpers/http.js'
import { FILE_STORES, onFileStore, type TestFileStore } from '../helpers/file-stores.js'

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
const png = (): Buffer => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(5000)])

let h: Harness, app: FastifyInstance, token: string, admin: Api, store: TestFileStore

async function withFiles (mod: 'denuncias' | 'atestados', n: number): Promise<{ id: string, items: any[], keys: string[] }> {
  const rec = mod === 'denuncias'
    ? ok(await admin.post('/denuncias', { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle', descripcion: 'x' }), 201)
    : ok(await admin.post('/atestados', { tipo: 'penal' }), 201)
  const field = mod === 'denuncias' ? 'adjuntos' : 'documentos_adjuntos'
  const items: any[] = []
  for (let i = 0; i < n; i++) {
    const res = await app.inject({ method: 'POST', url: `/${mod}/${rec._id}/archivos/${field}?nombre=f${i}.png`, headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' }, payload: png() })
    items.push(res.json().data.archivo)
  }
  expect(ok(await admin.get(`/${mod}/${rec._id}/verificar`))).toEqual({ valido: true })
  return { id: rec._id, items, keys: items.map((it) => mod === 'denuncias' ? it.sha256 : it.id) }
}

describe.each(FILE_STORES)('%s store', (kind) => {
  onFileStore(kind, {}, (t) => { ({ h, app, token, admin, store } = t) })

  describe.each(['denuncias', 'atestados'] as const)('%s: /verificar rehashes the files', (mod) => {
    it('one byte changed', async () => {
      const { id, items, keys } = await withFiles(mod, 2)
      const bytes = await store.read(keys[1]!)
      bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 1
      await store.write(keys[1]!, bytes)
      expect(ok(await admin.get(`/${mod}/${id}/verificar`))).toEqual({ valido: false, version_rota: 3, motivo: MOTIVOS.ARCHIVO_ALTERADO, archivo: items[1].id })
    })

    it('two files swapped', async () => {
      const { id, items, keys } = await withFiles(mod, 2)
      const [a, b] = [await store.read(keys[0]!), await store.read(keys[1]!)]
      await store.write(keys[0]!, b)
      await store.write(keys[1]!, a)
      expect(ok(await admin.get(`/${mod}/${id}/verificar`))).toEqual({ valido: false, version_rota: 2, motivo: MOTIVOS.ARCHIVO_ALTERADO, archivo: items[0].id })
    })

    it('one deleted, also after it was removed from the field', async () => {
      const { id, items, keys } = await withFiles(mod, 2)
      const field = mod === 'denuncias' ? 'adjuntos' : 'documentos_adjuntos'
      ok(await admin.put(`/${mod}/${id}`, { [field]: [items[1]] }))
      await store.remove(keys[0]!)
      expect(ok(await admin.get(`/${mod}/${id}/verificar`))).toEqual({ valido: false, version_rota: 2, motivo: MOTIVOS.ARCHIVO_FALTA, archivo: items[0].id })
    })
  })

  it('the seal covers each file\'s sha256: one changed in the live row breaks the chain', async () => {
    const { id } = await withFiles('denuncias', 1)
    await app.orm.em.fork().getConnection().execute(`update denuncias set adjuntos = jsonb_set(adjuntos, '{0,sha256}', '"${sha(Buffer.from('otro'))}"') where _id = ?`, [id])
    expect(ok(await admin.get(`/denuncias/${id}/verificar`))).toMatchObject({ valido: false, version_rota: 2, motivo: MOTIVOS.VERSION })
  })

  /** The auditor's script on a record's history, rehashing its files in a local copy of the store (docs/decisions.md). */
  async function auditor (mod: 'denuncias' | 'atestados', id: string): Promise<{ code: number, out: string }> {
    const copy = await store.localCopy()
    const file = join(copy, `historial-${id}-${Date.now()}.json`)
    writeFileSync(file, JSON.stringify((await admin.get(`/${mod}/${id}/historial`)).body))
    const integrity = (await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)).integrityKey.toString('base64')
    const args = ['deploy/auditoria/verificar-cadena.mjs', file, '--modulo', mod, '--clave-integridad', integrity, '--archivos', copy, '--clave-cifrado', TEST_KEY]
    return new Promise((resolve) => execFile(process.execPath, args, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), out: stdout + stderr })))
  }

  describe.each(['denuncias', 'atestados'] as const)('%s: the auditor\'s script rehashes the files', (mod) => {
    it('intact, then one byte changed, two swapped, one deleted: each named', async () => {
      const { id, items, keys } = await withFiles(mod, 3)
      const clean = await auditor(mod, id)
      expect([clean.code, clean.out.includes('Files intact.'), clean.out.includes('Chain intact.')], clean.out).toEqual([0, true, true])
      const bytes = await store.read(keys[0]!)
      bytes[50] = bytes[50]! ^ 1
      await store.write(keys[0]!, bytes)
      const cBytes = await store.read(keys[2]!)
      await store.write(keys[2]!, await store.read(keys[1]!))
      await store.remove(keys[1]!)
      const r = await auditor(mod, id)
      expect(r.code, r.out).toBe(1)
      expect(r.out).toMatch(new RegExp(`file ${items[0].id} \\(named from version 2\\): .*(altered|decrypt)`))
      expect(r.out).toContain(`file ${items[1].id} (named from version 3): missing`)
      expect(r.out).toMatch(new RegExp(`file ${items[2].id} \\(named from version 4\\): .*(altered|decrypt)`))
      expect(cBytes.length).toBeGreaterThan(0)
    })
  })
})
