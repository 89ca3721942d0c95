/**
 * Evidence files encrypted at rest and their chain of custody
 * (docs/user-guide.md "Evidence files"), through HTTP, the database and
 * the store (a directory and an S3 bucket): atestados.documentos_adjuntos (declared encrypted) keeps only
 * ciphertext on disk, downloads only with descifrar, every download in the
 * read log (encrypted) or the access log (plain), and /custodia lists the
 * upload, the downloads and the removal in order.
 */
import { createHash, randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { ok, type Api, type Res } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { FILE_STORES, onFileStore, type TestFileStore } from '../helpers/file-stores.js'
import { newUser } from '../helpers/users.js'
import { listenApp } from '../helpers/free-port.js'

const PDF = Buffer.concat([Buffer.from('%PDF-1.7\nDeclaración de la víctima: '), randomBytes(70_000)])
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(2000)])
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

let app: FastifyInstance, token: string, admin: Api, store: TestFileStore

async function upload (as: string, path: string, body: Buffer, type: string, nombre: string): Promise<Res> {
  const res = await app.inject({ method: 'POST', url: `${path}?nombre=${encodeURIComponent(nombre)}`, headers: { authorization: `Bearer ${as}`, 'content-type': type }, payload: body })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

async function download (as: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number, headers: Record<string, unknown>, raw: Buffer, body: any }> {
  const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${as}`, ...headers } })
  let body: unknown
  try { body = res.json() } catch { body = undefined }
  return { status: res.statusCode, headers: res.headers, raw: res.rawPayload, body }
}

/** A GET over a real connection to `app` (listening on demand): the declared length and what arrived before the answer ended or was cut. */
async function overTheWire (path: string, headers: Record<string, string>): Promise<{ declared: number, received: number }> {
  if (app.server.address() === null) await listenApp(app)
  const { port } = app.server.address() as AddressInfo
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
      let received = 0
      const done = (): void => { resolve({ declared: Number(res.headers['content-length']), received }) }
      res.on('data', (chunk: Buffer) => { received += chunk.length })
      res.on('end', done)
      res.on('error', done)
      res.on('close', done)
    })
    req.on('error', reject)
    req.end()
  })
}

describe.each(FILE_STORES)('%s store', (kind) => {
  onFileStore(kind, {}, (t) => { ({ app, token, admin, store } = t) })

  describe('encrypted at rest', () => {
    it('stores only ciphertext; downloads the bytes uploaded, whole, only with descifrar; each download in the read log', async () => {
      const consulta = await newUser(app, token, 'consulta')
      const ate = ok(await admin.post('/atestados', { tipo: 'penal', documentos_adjuntos: ['https://intranet.example/atestado.pdf'] }), 201)
      const { archivo, registro } = ok(await upload(token, `/atestados/${ate._id}/archivos/documentos_adjuntos`, PDF, 'application/pdf', 'declaración.pdf'), 201)
      expect(archivo.id).toMatch(/^cif-/)
      expect(archivo).toMatchObject({ bytes: PDF.length, sha256: sha(PDF), tipo: 'application/pdf' })
      expect(registro.documentos_adjuntos).toEqual(['https://intranet.example/atestado.pdf', archivo])
      // Stored: no plaintext, under the file's id (never its content address).
      expect(await store.objects()).toEqual([`${archivo.id.slice(0, 2)}/${archivo.id}`])
      const bytes = await store.read(archivo.id)
      expect(bytes.length).toBe(PDF.length + 40)
      expect(bytes.includes(Buffer.from('Declaración'))).toBe(false)
      expect(bytes.includes(PDF.subarray(100, 200))).toBe(false)

      const url = `/atestados/${ate._id}/archivos/documentos_adjuntos/${archivo.id}`
      const dl = await download(token, url)
      expect(dl.status).toBe(200)
      expect(dl.raw).toEqual(PDF)
      expect(dl.headers['content-length']).toBe(String(PDF.length))
      expect(dl.headers['accept-ranges']).toBe('bytes')
      expect(dl.headers.etag).toBe(`"${sha(PDF)}"`)
      expectError(await download(consulta.token, url) as unknown as Res, 'SIN_PERMISOS')

      const reads = ok(await admin.get(`/auditoria/lecturas?tipo=descarga&registro=${ate._id}`)).records
      expect(reads).toHaveLength(1)
      expect(reads[0]).toMatchObject({ tipo: 'descarga', registro: ate._id, campos: ['documentos_adjuntos'], archivo: archivo.id, usuario: registro._created_by })
      expect(ok(await admin.get(`/atestados/${ate._id}/verificar`))).toMatchObject({ valido: true })
    })

    it('serves ranges of the bytes uploaded (decrypted from the start, the tag checked), each logged with its range', async () => {
      const ate = ok(await admin.post('/atestados', { tipo: 'penal' }), 201)
      const { archivo } = ok(await upload(token, `/atestados/${ate._id}/archivos/documentos_adjuntos`, PDF, 'application/pdf', 'declaración.pdf'), 201)
      const url = `/atestados/${ate._id}/archivos/documentos_adjuntos/${archivo.id}`
      // Across the 64 KiB chunks the store reads in.
      const middle = [50_000, 69_999] as const
      for (const [asked, start, end] of [['bytes=0-9', 0, 9], [`bytes=${middle[0]}-${middle[1]}`, ...middle], ['bytes=-100', PDF.length - 100, PDF.length - 1], [`bytes=${PDF.length - 1}-`, PDF.length - 1, PDF.length - 1]] as const) {
        const dl = await download(token, url, { range: asked })
        expect([dl.status, dl.headers['content-range'], dl.headers['content-length']], asked).toEqual([206, `bytes ${start}-${end}/${PDF.length}`, String(end - start + 1)])
        expect(dl.raw.equals(PDF.subarray(start, end + 1)), asked).toBe(true)
      }
      const past = await download(token, url, { range: `bytes=${PDF.length}-` })
      expect([past.status, past.headers['content-range']]).toEqual([416, `bytes */${PDF.length}`])
      const custody = ok(await admin.get(`${url}/custodia`))
      expect(custody.eventos.filter((e: any) => e.accion === 'descarga').map((e: any) => e.rango)).toEqual(['0-9', `${middle[0]}-${middle[1]}`, `${PDF.length - 100}-${PDF.length - 1}`, `${PDF.length - 1}-${PDF.length - 1}`])
      // One byte of the stored ciphertext changed near its end: even the first 10 bytes are not served whole.
      const stored = await store.read(archivo.id)
      stored[stored.length - 30] = stored[stored.length - 30]! ^ 1
      await store.write(archivo.id, stored)
      // Over a real connection: fewer bytes than Content-Length arrive, so no client takes the answer for whole.
      for (const range of ['bytes=0-9', undefined]) {
        const got = await overTheWire(url, range === undefined ? {} : { range })
        expect(got.received, range).toBeLessThan(got.declared)
      }
    })

    it('a ciphertext moved to another file id (another size) is refused before a byte leaves', async () => {
      const ate = ok(await admin.post('/atestados', { tipo: 'penal' }), 201)
      const a = ok(await upload(token, `/atestados/${ate._id}/archivos/documentos_adjuntos`, PDF, 'application/pdf', 'a.pdf'), 201).archivo
      const b = ok(await upload(token, `/atestados/${ate._id}/archivos/documentos_adjuntos`, PNG, 'image/png', 'b.png'), 201).archivo
      await store.write(b.id, await store.read(a.id))
      expectError(await download(token, `/atestados/${ate._id}/archivos/documentos_adjuntos/${b.id}`), 'ARCHIVO_ALTERADO')
    })
  })

  describe('custody', () => {
    it('lists the upload, each download (ranges named) and the removal, in order; plain downloads in the access log', async () => {
      const consulta = await newUser(app, token, 'consulta')
      const den = ok(await admin.post('/denuncias', { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle', descripcion: 'x' }), 201)
      const { archivo } = ok(await upload(token, `/denuncias/${den._id}/archivos/adjuntos`, PNG, 'image/png', 'foto.png'), 201)
      const url = `/denuncias/${den._id}/archivos/adjuntos/${archivo.id}`
      expect((await download(consulta.token, url)).raw).toEqual(PNG)
      expect((await download(token, url, { range: 'bytes=0-99' })).status).toBe(206)
      ok(await admin.put(`/denuncias/${den._id}`, { adjuntos: [] }))
      const custody = ok(await admin.get(`${url}/custodia`))
      expect(custody.archivo).toEqual(archivo)
      expect(custody.cifrado).toBe(false)
      expect(custody.eventos.map((e: any) => [e.accion, e.usuario, e.version ?? e.rango ?? null])).toEqual([
        ['subida', archivo.subido_por, 2],
        ['descarga', consulta.id, null],
        ['descarga', archivo.subido_por, '0-99'],
        ['retirada', archivo.subido_por, 3],
      ])
      const access = ok(await admin.get(`/auditoria/lecturas?tipo=acceso&registro=${den._id}`)).records
      expect(access.map((r: any) => r.usuario).sort()).toEqual([consulta.id, archivo.subido_por].sort())
      // Removed: custody, like the download, only for those who may see deleted things.
      expectError(await download(consulta.token, `${url}/custodia`) as unknown as Res, 'ARCHIVO_NO_ENCONTRADO')
    })
  })
})
