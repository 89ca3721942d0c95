/**
 * Altered evidence is never served as intact (docs/user-guide.md
 * "Evidence files"): over a real connection, a download of a stored file
 * with one byte changed, truncated, with bytes appended or swapped with
 * another (in a directory and in an S3 bucket, plain and encrypted at
 * rest, whole and as a range) never arrives as a complete answer with the
 * sealed ETag: it fails before the first byte (500 `Archivo alterado`)
 * or is cut short. Each is logged as tampering (error level, no personal
 * data) and counted in evidence_files_altered_total; intact files still
 * download whole.
 */
import { createHash, randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ok, type Api } from '../helpers/http.js'
import { errorOf } from '../helpers/errors.js'
import { FILE_STORES, startFileStore, type TestFileStore } from '../helpers/file-stores.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { freePort, listenApp } from '../helpers/free-port.js'
import { wire, type WireAnswer } from '../helpers/wire.js'

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
/** Larger than one read of the store (64 KiB), so the answer starts before the end is checked. */
const pdf = (n = 200_000): Buffer => Buffer.concat([Buffer.from('%PDF-1.7\nDeclaración de Ana Pérez: '), randomBytes(n)])

const MODULES = {
  denuncias: { field: 'adjuntos', body: { denunciante_nombre: 'Ana Pérez', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle', descripcion: 'x' }, encrypted: false },
  atestados: { field: 'documentos_adjuntos', body: { tipo: 'penal' }, encrypted: true },
} as const
type Mod = keyof typeof MODULES

let t: TestApp & { store: TestFileStore }, app: FastifyInstance, admin: Api, port: number, metricsPort: number
const lines: string[] = []

async function scrapeAltered (mod: Mod): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`evidence_files_altered_total{modulo="${mod}"} `))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

/** A record of `mod` with `files` uploaded; its url, items and store keys. */
async function withFiles (mod: Mod, files: Buffer[]): Promise<{ url: string, items: any[], keys: string[] }> {
  const { field, body } = MODULES[mod]
  const rec = ok(await admin.post(`/${mod}`, body), 201)
  const items: any[] = []
  for (const [i, bytes] of files.entries()) {
    const res = await app.inject({ method: 'POST', url: `/${mod}/${rec._id}/archivos/${field}?nombre=f${i}.pdf`, headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/pdf' }, payload: bytes })
    expect(res.statusCode, res.body).toBe(201)
    items.push(res.json().data.archivo)
  }
  return { url: `/${mod}/${rec._id}/archivos/${field}`, items, keys: items.map((it) => MODULES[mod].encrypted ? it.id : it.sha256) }
}

const get = async (url: string, headers: Record<string, string> = {}): Promise<WireAnswer> => wire(port, { path: url, headers: { authorization: `Bearer ${t.token}`, ...headers } })

/** Never a complete answer with the sealed ETag: a 500 `Archivo alterado` (no ETag), or an answer cut before its end. */
function expectNotServed (got: WireAnswer, item: any, what: string): void {
  const whole = got.status === 200 && got.complete && got.body.length === item.bytes && got.headers.etag === `"${item.sha256}"`
  expect(whole, what).toBe(false)
  if (got.status === 500) {
    expect([JSON.parse(got.body.toString()), got.headers.etag], what).toEqual([errorOf('ARCHIVO_ALTERADO'), undefined])
  } else {
    expect([got.status === 200 || got.status === 206, got.complete, got.body.length < Number(got.headers['content-length'])], what).toEqual([true, false, true])
  }
}

/** The tampering lines logged for file `id`. */
const logged = (id: string): any[] => lines.flatMap((l) => l.split('\n')).filter((l) => l.includes(id)).map((l) => JSON.parse(l)).filter((l) => /^evidence file altered/.test(l.msg))

describe.each(FILE_STORES)('%s store', (kind) => {
  beforeAll(async () => {
    const store = await startFileStore(kind)
    metricsPort = await freePort()
    t = { ...await startTestApp({ env: { ...store.env, METRICS_PORT: String(metricsPort), LOG_LEVEL: 'error' }, logStream: new Writable({ write (chunk, _e, done) { lines.push(String(chunk)); done() } }) }), store }
    ;({ app, admin } = t)
    port = Number(new URL(await listenApp(app)).port)
  })
  afterAll(async () => {
    await t?.h.close()
    await t?.store.close()
  })

  describe.each(Object.keys(MODULES) as Mod[])('%s', (mod) => {
    it('intact: whole and a range arrive complete with the sealed ETag; nothing counted', async () => {
      const bytes = pdf()
      const { url, items } = await withFiles(mod, [bytes])
      const before = await scrapeAltered(mod)
      const whole = await get(`${url}/${items[0].id}`)
      expect([whole.status, whole.complete, whole.headers.etag, sha(whole.body)]).toEqual([200, true, `"${sha(bytes)}"`, sha(bytes)])
      const part = await get(`${url}/${items[0].id}`, { range: 'bytes=100-199' })
      expect([part.status, part.complete, part.body.equals(bytes.subarray(100, 200))]).toEqual([206, true, true])
      expect(await scrapeAltered(mod)).toBe(before)
    })

    it('one byte changed: the whole and a range are cut short; logged and counted each time', async () => {
      const { url, items, keys } = await withFiles(mod, [pdf()])
      const stored = await t.store.read(keys[0]!)
      stored[stored.length - 1000] = stored[stored.length - 1000]! ^ 1
      await t.store.write(keys[0]!, stored)
      const before = await scrapeAltered(mod)
      expectNotServed(await get(`${url}/${items[0].id}`), items[0], 'whole')
      expectNotServed(await get(`${url}/${items[0].id}`, { range: 'bytes=0-9' }), items[0], 'range')
      await expect.poll(() => scrapeAltered(mod)).toBe(before + 2)
      const found = logged(items[0].id)
      expect(found).toHaveLength(2)
      expect(found[0]).toMatchObject({ level: 50, module: mod, record: url.split('/')[2], field: MODULES[mod].field, file: items[0].id, expected: items[0].sha256 })
      // No personal data: neither the record's values nor the file's name or content.
      expect(JSON.stringify(found)).not.toMatch(/Ana|Pérez|f0\.pdf|Declaraci/)
      if (!MODULES[mod].encrypted) expect(found[0].found).toMatch(/^[0-9a-f]{64}$/)
    })

    it('truncated, or bytes appended: 500 Archivo alterado before the first byte, logged and counted', async () => {
      const { url, items, keys } = await withFiles(mod, [pdf(), pdf()])
      const a = await t.store.read(keys[0]!)
      await t.store.write(keys[0]!, a.subarray(0, a.length - 10))
      const b = await t.store.read(keys[1]!)
      await t.store.write(keys[1]!, Buffer.concat([b, Buffer.from('más')]))
      const before = await scrapeAltered(mod)
      for (const [i, item] of items.entries()) {
        for (const headers of [{}, { range: 'bytes=0-9' }] as Array<Record<string, string>>) {
          const got = await get(`${url}/${item.id}`, headers)
          expect(got.status, `file ${i}`).toBe(500)
          expectNotServed(got, item, `file ${i}`)
        }
        expect(logged(item.id)[0]).toMatchObject({ level: 50, file: item.id, expected: item.sha256, found: expect.stringMatching(/^stored size \d+, sealed \d+$/) })
      }
      expect(await scrapeAltered(mod)).toBe(before + 4)
    })

    it('deleted from the store while its record names it: 500 Archivo alterado, logged and counted (not a 404)', async () => {
      const { url, items, keys } = await withFiles(mod, [pdf()])
      await t.store.remove(keys[0]!)
      const before = await scrapeAltered(mod)
      const got = await get(`${url}/${items[0].id}`)
      expect(got.status).toBe(500)
      expectNotServed(got, items[0], 'deleted')
      expect(JSON.parse(got.body.toString())).toMatchObject({ codigo: 'ARCHIVO_ALTERADO' })
      expect(logged(items[0].id)[0]).toMatchObject({ level: 50, file: items[0].id, expected: items[0].sha256, found: 'missing from the store' })
      expect(await scrapeAltered(mod)).toBe(before + 1)
    })

    it('swapped with another file of the same size, and of another size: never served', async () => {
      const { url, items, keys } = await withFiles(mod, [pdf(), pdf(), pdf(90_000)])
      const [a, b, c] = [await t.store.read(keys[0]!), await t.store.read(keys[1]!), await t.store.read(keys[2]!)]
      await t.store.write(keys[0]!, b)
      await t.store.write(keys[1]!, a)
      await t.store.write(keys[2]!, a)
      const before = await scrapeAltered(mod)
      expectNotServed(await get(`${url}/${items[0].id}`), items[0], 'same size')
      expectNotServed(await get(`${url}/${items[1].id}`, { range: 'bytes=-5' }), items[1], 'same size, a range')
      const other = await get(`${url}/${items[2].id}`)
      expect(other.status).toBe(500)
      expectNotServed(other, items[2], 'another size')
      await expect.poll(() => scrapeAltered(mod)).toBe(before + 3)
      expect(c.length).toBeGreaterThan(0)
    })
  })
})
