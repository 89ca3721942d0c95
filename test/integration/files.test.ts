/**
 * Evidence files (docs/user-guide.md "Evidence files"), through HTTP and
 * the database, on both stores (a directory, FILES_DIR, and an S3 bucket on a real
 * S3-protocol server, FILES_S3_*): upload as an update of
 * the record (version, history, seal), download with type, disposition,
 * ETag and ranges, permissions and scope, refused types and sizes, removal
 * that keeps the bytes, stored URL strings of old, forged items refused,
 * and an interrupted upload that leaves nothing behind.
 */
import { createHash, randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/app.js'
import { client, ok, type Api, type Res } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { FILE_STORES, onFileStore, type TestFileStore } from '../helpers/file-stores.js'
import { newUser } from '../helpers/users.js'
import { POLL_SQL } from '../../db/revocation-epoch.js'
import { listenApp } from '../helpers/free-port.js'

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(3000)])
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(5000)])
const HTML = Buffer.from('<!DOCTYPE html><html><body><script>alert(1)</script></body></html>')
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
const MAX = 200_000

let h: Harness, app: FastifyInstance, token: string, admin: Api, store: TestFileStore

async function upload (as: string, path: string, body: Buffer | Readable, type: string, nombre: string, headers: Record<string, string> = {}): Promise<Res> {
  const res = await app.inject({ method: 'POST', url: `${path}?nombre=${encodeURIComponent(nombre)}`, headers: { authorization: `Bearer ${as}`, 'content-type': type, ...headers }, payload: body })
  let parsed: unknown
  try { parsed = res.json() } catch { parsed = res.body }
  return { status: res.statusCode, body: parsed, headers: res.headers }
}

async function download (as: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number, headers: Record<string, unknown>, raw: Buffer, body: any }> {
  const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${as}`, ...headers } })
  let body: unknown
  try { body = res.json() } catch { body = undefined }
  return { status: res.statusCode, headers: res.headers, raw: res.rawPayload, body }
}

async function denuncia (api: Api = admin, extra: Record<string, unknown> = {}): Promise<any> {
  return ok(await api.post('/denuncias', { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle Mayor', descripcion: 'Robo de bicicleta', ...extra }), 201)
}

describe.each(FILE_STORES)('%s store', (kind) => {
  onFileStore(kind, { FILE_MAX_BYTES: String(MAX) }, (t) => { ({ h, app, token, admin, store } = t) })

  describe('upload and download', () => {
    it('adds the file to the field as an update: version, history, seal, verified; the bytes as uploaded', async () => {
      const rec = await denuncia()
      const res = await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'daños coche.png')
      const data = ok(res, 201)
      expect(data.archivo).toMatchObject({ nombre: 'daños coche.png', tipo: 'image/png', bytes: PNG.length, sha256: sha(PNG), subido_por: rec._created_by })
      expect(data.archivo.subido).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      expect(data.registro._version).toBe(2)
      expect(data.registro.adjuntos).toEqual([data.archivo])
      const got = ok(await admin.get(`/denuncias/${rec._id}`))
      expect(got.adjuntos).toEqual([data.archivo])
      const history = ok(await admin.get(`/denuncias/${rec._id}/historial`))
      expect(history.versiones.at(-1)).toMatchObject({ _version: 2, accion: 'editar', campos: ['adjuntos'] })
      expect(ok(await admin.get(`/denuncias/${rec._id}/verificar`))).toMatchObject({ valido: true })
      // Content-addressed in the store.
      expect(await store.read(sha(PNG))).toEqual(PNG)

      const dl = await download(token, `/denuncias/${rec._id}/archivos/adjuntos/${data.archivo.id}`)
      expect(dl.status).toBe(200)
      expect(dl.raw).toEqual(PNG)
      expect(dl.headers['content-type']).toBe('image/png')
      expect(dl.headers.etag).toBe(`"${sha(PNG)}"`)
      expect(dl.headers['accept-ranges']).toBe('bytes')
      expect(dl.headers['content-disposition']).toBe(`inline; filename="danos coche.png"; filename*=UTF-8''da%C3%B1os%20coche.png`)
      expect(dl.headers['content-length']).toBe(String(PNG.length))
    })

    it('is one update of the record, which reads it once: begin, the locked read, the update and its history entry, commit', async () => {
      const rec = await denuncia()
      const queries: string[] = []
      const knex = app.orm.em.getConnection().getKnex()
      const onQuery = (q: { sql: string }): void => { if (q.sql !== POLL_SQL) queries.push(q.sql) }
      knex.on('query', onQuery)
      try {
        ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'una.png'), 201)
      } finally {
        knex.off('query', onQuery)
      }
      const reads = queries.filter((q) => /^select .* from "denuncias"/.test(q))
      expect(reads, queries.join('\n')).toHaveLength(1)
      expect(reads[0]).toMatch(/for update$/)
      expect(queries[0]).toMatch(/^begin/i)
      expect(queries.at(-1)).toMatch(/^commit/i)
      expect(queries, queries.join('\n')).toHaveLength(5)
    })

    it('concurrent uploads to one record each add their file (the update\'s lock orders them)', async () => {
      const rec = await denuncia()
      const names = ['a.png', 'b.png', 'c.png', 'd.png']
      const answers = await Promise.all(names.map(async (n) => upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, Buffer.concat([PNG, Buffer.from(n)]), 'image/png', n)))
      for (const res of answers) ok(res, 201)
      const got = ok(await admin.get(`/denuncias/${rec._id}`))
      expect(got._version).toBe(names.length + 1)
      expect(got.adjuntos.map((a: { nombre: string }) => a.nombre).sort()).toEqual(names)
      expect(ok(await admin.get(`/denuncias/${rec._id}/verificar`))).toMatchObject({ valido: true })
    })

    it('serves ranges (206, Content-Range), 416 past the end, 304 for its ETag', async () => {
      const rec = await denuncia()
      const { archivo } = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PDF, 'application/pdf', 'declaracion.pdf'), 201)
      const url = `/denuncias/${rec._id}/archivos/adjuntos/${archivo.id}`
      const first = await download(token, url, { range: 'bytes=0-99' })
      expect(first.status).toBe(206)
      expect(first.headers['content-range']).toBe(`bytes 0-99/${PDF.length}`)
      expect(first.raw).toEqual(PDF.subarray(0, 100))
      const tail = await download(token, url, { range: 'bytes=-10' })
      expect(tail.status).toBe(206)
      expect(tail.raw).toEqual(PDF.subarray(PDF.length - 10))
      const open = await download(token, url, { range: `bytes=${PDF.length - 5}-` })
      expect(open.raw).toEqual(PDF.subarray(PDF.length - 5))
      const past = await download(token, url, { range: `bytes=${PDF.length}-` })
      expect(past.status).toBe(416)
      expect(past.headers['content-range']).toBe(`bytes */${PDF.length}`)
      expect(past.body).toMatchObject({ success: false, error: 'Rango no satisfacible' })
      // A stale If-Range: the whole file.
      const stale = await download(token, url, { range: 'bytes=0-9', 'if-range': '"otro"' })
      expect(stale.status).toBe(200)
      expect(stale.raw).toEqual(PDF)
      const cached = await download(token, url, { 'if-none-match': `"${sha(PDF)}"` })
      expect(cached.status).toBe(304)
      expect(cached.raw.length).toBe(0)
    })

    it('sends HTML, SVG and JavaScript as attachments, never inline; sanitises names', async () => {
      const rec = await denuncia()
      for (const [body, type, name] of [[HTML, 'text/html', 'pagina.html'], [SVG, 'image/svg+xml', 'dibujo.svg'], [Buffer.from('alert(1)'), 'text/javascript', 'x.js']] as const) {
        const { archivo } = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, body, type, name), 201)
        const dl = await download(token, `/denuncias/${rec._id}/archivos/adjuntos/${archivo.id}`)
        expect(dl.headers['content-disposition']).toMatch(/^attachment; /)
        expect(dl.headers['x-content-type-options']).toBe('nosniff')
      }
      const named = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, Buffer.from('hola'), 'text/plain', '../../etc/pass\u0000wd\u202e.txt'), 201)
      expect(named.archivo.nombre).toBe('pass_wd_.txt')
      expectError(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, Buffer.from('hola'), 'text/plain', '..'), 'DATOS_INVALIDOS')
    })

    it('refuses a declared type the content contradicts, leaving no file and no version', async () => {
      const rec = await denuncia()
      const before = await store.objects()
      for (const [body, type] of [[HTML, 'image/png'], [HTML, 'text/plain'], [PNG, 'application/pdf'], [Buffer.from('no soy un png'), 'image/png'], [SVG, 'image/png']] as const) {
        const res = await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, body, type, 'x')
        expectError(res, 'TIPO_CONTENIDO_NO_SOPORTADO')
        expect(res.body.detalles[0].campo).toBe('Content-Type')
      }
      expect(await store.objects()).toEqual(before)
      expect(ok(await admin.get(`/denuncias/${rec._id}`))._version).toBe(1)
      // Declaring nothing in particular records what the bytes show.
      const plain = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'application/octet-stream', 'foto'), 201)
      expect(plain.archivo.tipo).toBe('image/png')
    })

    it('refuses a body over FILE_MAX_BYTES (declared or streamed), an empty one, an unknown field or file', async () => {
      const rec = await denuncia()
      const before = await store.objects()
      expectError(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, Buffer.alloc(MAX + 1, 1), 'application/octet-stream', 'grande'), 'PETICION_DEMASIADO_GRANDE')
      const streamed = Readable.from((function * () { for (let i = 0; i < 30; i++) yield Buffer.alloc(10_000, 2) })())
      expectError(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, streamed, 'application/octet-stream', 'grande'), 'PETICION_DEMASIADO_GRANDE')
      expectError(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, Buffer.alloc(0), 'application/octet-stream', 'vacio'), 'DATOS_REQUERIDOS')
      expect(await store.objects()).toEqual(before)
      expectError(await upload(token, `/denuncias/${rec._id}/archivos/descripcion`, PNG, 'image/png', 'x.png'), 'DATOS_INVALIDOS')
      expectError(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', ''), 'DATOS_REQUERIDOS')
      expectError(await upload(token, '/denuncias/DEN-2020-99999/archivos/adjuntos', PNG, 'image/png', 'x.png'), 'REGISTRO_NO_ENCONTRADO')
      expectError(await download(token, `/denuncias/${rec._id}/archivos/adjuntos/no-existe`) as unknown as Res, 'ARCHIVO_NO_ENCONTRADO')
      expect(ok(await admin.get(`/denuncias/${rec._id}`))._version).toBe(1)
    })

    it('stores the same bytes once (content-addressed), leaving no temporary object', async () => {
      const bytes = Buffer.concat([PNG, randomBytes(10)])
      for (let i = 0; i < 2; i++) ok(await upload(token, `/denuncias/${(await denuncia())._id}/archivos/adjuntos`, bytes, 'image/png', `copia-${i}.png`), 201)
      const objects = await store.objects()
      expect(objects.filter((o) => o.endsWith(sha(bytes)))).toEqual([`${sha(bytes).slice(0, 2)}/${sha(bytes)}`])
      expect(objects.filter((o) => !/^[0-9a-f]{2}\/([0-9a-f]{64}|cif-[0-9a-f-]{36})$/.test(o))).toEqual([])
    })

    it('takes a JSON file as a file, not as a request body', async () => {
      const rec = await denuncia()
      const json = Buffer.from(JSON.stringify({ a: 1, adjuntos: 'x' }))
      const { archivo } = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, json, 'application/json', 'datos.json'), 201)
      expect((await download(token, `/denuncias/${rec._id}/archivos/adjuntos/${archivo.id}`)).raw).toEqual(json)
    })
  })

  describe('permissions and scope', () => {
    it('needs editar (and its scope) to upload, ver (and its scope) to download', async () => {
      const consulta = await newUser(app, token, 'consulta')
      const agente = await newUser(app, token, 'agente')
      const oficial = await newUser(app, token, 'oficial')
      const rec = await denuncia()
      const { archivo } = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'a.png'), 201)
      const url = `/denuncias/${rec._id}/archivos/adjuntos/${archivo.id}`
      // consulta: sees, may not edit.
      expectError(await upload(consulta.token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'b.png'), 'SIN_PERMISOS')
      expect((await download(consulta.token, url)).raw).toEqual(PNG)
      // agente: the record is not its own, so it does not exist for it; its own takes files (editar:propios).
      expectError(await upload(agente.token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'b.png'), 'REGISTRO_NO_ENCONTRADO')
      expectError(await download(agente.token, url) as unknown as Res, 'REGISTRO_NO_ENCONTRADO')
      const agentes = await denuncia(client(app, agente.token))
      const added = ok(await upload(agente.token, `/denuncias/${agentes._id}/archivos/adjuntos`, PNG, 'image/png', 'c.png'), 201).archivo
      expect((await download(agente.token, `/denuncias/${agentes._id}/archivos/adjuntos/${added.id}`)).raw).toEqual(PNG)
      // oficial: editar only its own records.
      expectError(await upload(oficial.token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'b.png'), 'SIN_PERMISOS')
      const own = await denuncia(client(app, oficial.token))
      ok(await upload(oficial.token, `/denuncias/${own._id}/archivos/adjuntos`, PNG, 'image/png', 'b.png'), 201)
      // No token: 401.
      const anon = await app.inject({ method: 'POST', url: `/denuncias/${rec._id}/archivos/adjuntos?nombre=x`, payload: PNG, headers: { 'content-type': 'image/png' } })
      expect(anon.statusCode).toBe(401)
      expect(ok(await admin.get(`/denuncias/${rec._id}`))._version).toBe(2)
    })
  })

  describe('removal, history and older values', () => {
    it('removes a file by a PUT; the bytes stay, reachable through the history by those who may see deleted things', async () => {
      const consulta = await newUser(app, token, 'consulta')
      const rec = await denuncia()
      const a = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'a.png'), 201)
      const b = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PDF, 'application/pdf', 'b.pdf'), 201)
      expect(b.registro.adjuntos).toHaveLength(2)
      // Keep b (as the GET shows it), drop a.
      const after = ok(await admin.put(`/denuncias/${rec._id}`, { adjuntos: [b.archivo], _version: 3 }))
      expect(after.adjuntos).toEqual([b.archivo])
      expect(after._version).toBe(4)
      expect(ok(await admin.get(`/denuncias/${rec._id}/verificar`))).toMatchObject({ valido: true })
      const url = `/denuncias/${rec._id}/archivos/adjuntos/${a.archivo.id}`
      expect((await download(token, url)).raw).toEqual(PNG)
      expectError(await download(consulta.token, url) as unknown as Res, 'ARCHIVO_NO_ENCONTRADO')
      expect((await download(consulta.token, `/denuncias/${rec._id}/archivos/adjuntos/${b.archivo.id}`)).raw).toEqual(PDF)
    })

    it('refuses a file object the record does not hold, in a PUT, a POST and an import', async () => {
      const rec = await denuncia()
      const forged = { id: 'x', nombre: 'x.png', tipo: 'image/png', bytes: 1, sha256: sha(PNG), subido: '2026-01-01 00:00:00', subido_por: 'USR-2026-00001' }
      expectError(await admin.put(`/denuncias/${rec._id}`, { adjuntos: [forged] }), 'DATOS_INVALIDOS')
      expectError(await admin.post('/denuncias', { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'x', descripcion: 'x', adjuntos: [forged] }), 'DATOS_INVALIDOS')
      // Nor by an import.
      const row = JSON.stringify({ denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'x', descripcion: 'x', adjuntos: [forged] })
      const imported = await app.inject({ method: 'POST', url: '/denuncias/importar', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, payload: `${row}\n` })
      expect(imported.statusCode, imported.body).toBe(400)
      expect(imported.json().detalles[0]).toMatchObject({ campo: 'fila 1: adjuntos[0]' })
    })

    it('keeps URL strings of old readable and verifying, beside uploaded files', async () => {
      const rec = await denuncia(admin, { adjuntos: ['https://intranet.example/doc/1.pdf'] })
      expect(rec.adjuntos).toEqual(['https://intranet.example/doc/1.pdf'])
      const { registro } = ok(await upload(token, `/denuncias/${rec._id}/archivos/adjuntos`, PNG, 'image/png', 'a.png'), 201)
      expect(registro.adjuntos[0]).toBe('https://intranet.example/doc/1.pdf')
      expect(registro.adjuntos[1].sha256).toBe(sha(PNG))
      expect(ok(await admin.get(`/denuncias/${rec._id}/verificar`))).toMatchObject({ valido: true })
    })
  })

  describe('atomic uploads', () => {
    /** POSTs `declared` bytes to a listening `on`, sends `sent` of them and closes the connection. */
    async function cutOff (on: FastifyInstance, recId: string, declared: number, sent: number): Promise<void> {
      if (on.server.address() === null) await listenApp(on)
      const { port } = on.server.address() as AddressInfo
      await new Promise<void>((resolve) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: `/denuncias/${recId}/archivos/adjuntos?nombre=corte.bin`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': String(declared) } })
        req.on('error', () => resolve())
        req.on('response', () => resolve())
        req.write(randomBytes(sent), () => { setTimeout(() => { req.destroy(); resolve() }, 200) })
      })
    }

    /** The stored objects once they are `expected`, or as they are after 5 s (the server cleans up once it notices the closed connection). */
    async function settledObjects (expected: string[]): Promise<string[]> {
      for (let waited = 0; waited < 5000; waited += 100) {
        const now = await store.objects()
        if (JSON.stringify(now) === JSON.stringify(expected)) return now
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      return store.objects()
    }

    it('an upload cut off half-way leaves no file, no temporary file and no version', async () => {
      const rec = await denuncia()
      const before = await store.objects()
      await cutOff(app, rec._id, 150_000, 60_000)
      expect(await settledObjects(before)).toEqual(before)
      expect(ok(await admin.get(`/denuncias/${rec._id}`))._version).toBe(1)
    })

    it('a file of several S3 parts (5 MiB each) arrives whole; one cut off after a part leaves nothing', async () => {
      const big = await h.app({ env: { ...store.env, FILE_MAX_BYTES: String(20 * 1024 * 1024) } })
      const rec = await denuncia()
      const body = randomBytes(11 * 1024 * 1024 + 17)
      const res = await big.inject({ method: 'POST', url: `/denuncias/${rec._id}/archivos/adjuntos?nombre=video.bin`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, payload: body })
      const { archivo } = ok({ status: res.statusCode, body: res.json() }, 201)
      expect(archivo).toMatchObject({ bytes: body.length, sha256: sha(body) })
      // (Compared by hash: toEqual walks 11 MiB byte by byte.)
      expect(sha(await store.read(sha(body)))).toBe(sha(body))
      const dl = await big.inject({ method: 'GET', url: `/denuncias/${rec._id}/archivos/adjuntos/${archivo.id}`, headers: { authorization: `Bearer ${token}`, range: `bytes=${6 * 1024 * 1024}-` } })
      expect(dl.statusCode).toBe(206)
      expect(sha(dl.rawPayload)).toBe(sha(body.subarray(6 * 1024 * 1024)))
      const before = await store.objects()
      await cutOff(big, rec._id, 12 * 1024 * 1024, 7 * 1024 * 1024)
      expect(await settledObjects(before)).toEqual(before)
      expect(ok(await admin.get(`/denuncias/${rec._id}`))._version).toBe(2)
    })
  })
})
