/**
 * An import over a real connection (docs/user-guide.md "Import
 * (importar)"): a client that goes away before the import commits leaves
 * nothing written (no records, no history, no events), and a body past
 * IMPORT_MAX_ROWS is answered 413 while the client is still sending it,
 * the rest unread and the connection closed; while a body is still
 * arriving, its checked rows wait in an encrypted temporary file, not in
 * a transaction (the embedded database's one connection stays free). A listening server and a raw
 * HTTP client; the write is held at its first `inside` hook, so the
 * client's going away happens inside the transaction, not by timing.
 */
import { once } from 'node:events'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request, type ClientRequest, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { login } from '../helpers/http.js'
import { usingPostgres } from '../helpers/services.js'
import { listenApp } from '../helpers/free-port.js'

const MAX_ROWS = 2000
let h: Harness, app: FastifyInstance, token: string, port: number
/** Set to hold the next `inside` hook of denuncias until released. */
let gate: { reached: () => void, released: Promise<void> } | undefined
let committed = 0
/** The imports' temporary files go here (TMPDIR, read by os.tmpdir() at each call). */
const spoolRoot = mkdtempSync(join(tmpdir(), 'import-spool-test-'))
const realTmp = process.env.TMPDIR

beforeAll(async () => {
  process.env.TMPDIR = spoolRoot
  h = await createHarness()
  app = await h.app({ env: { IMPORT_MAX_ROWS: String(MAX_ROWS), METRICS_PORT: '0' } })
  token = await login(app)
  app.records.hooks.on('denuncias', 'inside', async () => {
    const g = gate
    if (g === undefined) return
    gate = undefined
    g.reached()
    await g.released
  })
  app.records.hooks.on('denuncias', 'after', async () => { committed++ })
  port = Number(new URL(await listenApp(app)).port)
})
afterAll(async () => {
  await h.close()
  if (realTmp === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = realTmp
  rmSync(spoolRoot, { recursive: true, force: true })
})

/** The import files under TMPDIR (each import makes a policia-import-* folder). */
function spoolFiles (): string[] {
  return readdirSync(spoolRoot).filter((d) => d.startsWith('policia-import-')).flatMap((d) => readdirSync(join(spoolRoot, d)).map((f) => join(spoolRoot, d, f)))
}

async function counts (): Promise<{ denuncias: number, historial: number }> {
  const rows = await app.orm.em.fork().getConnection().execute<Array<{ d: number, h: number }>>('select (select count(*)::int from "denuncias") as d, (select count(*)::int from "sys_historial") as h')
  return { denuncias: rows[0]!.d, historial: rows[0]!.h }
}

/** Until no transaction but this query's is open on the test database (embedded: the one connection is free). */
async function transactionsDone (): Promise<void> {
  const em = app.orm.em.fork()
  if (!usingPostgres) { await counts(); return }
  const deadline = Date.now() + 20_000
  for (;;) {
    const rows = await em.getConnection().execute<Array<{ n: number }>>('select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null')
    if (rows[0]!.n === 0) return
    if (Date.now() > deadline) throw new Error('a transaction is still open')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const line = (i: number): string => JSON.stringify({ denunciante_nombre: `Ana ${i}`, tipo: 'hurto', fecha_hechos: '2026-06-01 10:00:00', lugar_hechos: 'Calle Mayor', descripcion: `Fila ${i}` })
const body = (rows: number): string => Array.from({ length: rows }, (_, i) => line(i)).join('\n') + '\n'

function post (headers: Record<string, string | number>): ClientRequest {
  const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/denuncias/importar', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson', ...headers } })
  req.on('error', () => undefined) // the test destroys it
  return req
}

describe('an import over a real connection', () => {
  it('a client that goes away before the commit: rolled back, nothing written, no event', async () => {
    const before = await counts()
    let release!: () => void
    const reached = new Promise<void>((resolve) => {
      gate = { reached: resolve, released: new Promise<void>((r) => { release = r }) }
    })
    const serverSocket = once(app.server, 'connection') as Promise<[Socket]>
    const text = body(1200) // more rows than one batch: the write goes on after the hook
    const req = post({ 'content-length': Buffer.byteLength(text) })
    let answered = false
    req.on('response', () => { answered = true })
    req.end(text)
    const [socket] = await serverSocket
    await reached // the first batch is written, inside the import's transaction
    const closed = once(socket, 'close')
    req.destroy()
    await closed // the server saw the client go
    release()
    await transactionsDone()
    expect(answered).toBe(false)
    expect(await counts()).toEqual(before)
    expect(committed).toBe(0)
    // The service is fine afterwards: the same import, kept, commits.
    const res = await app.inject({ method: 'POST', url: '/denuncias/importar', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, payload: body(3) })
    expect(res.statusCode).toBe(201)
    expect(committed).toBe(3)
  }, 60_000)

  it('past IMPORT_MAX_ROWS: 413 while the body is still being sent, the rest dropped, the connection closed soon after', async () => {
    const before = await counts()
    const req = post({ 'transfer-encoding': 'chunked' })
    const answer = once(req, 'response') as Promise<[IncomingMessage]>
    req.write(body(MAX_ROWS + 1)) // and never ends
    const [res] = await answer
    expect(res.statusCode).toBe(413)
    const chunks: Buffer[] = []
    res.on('data', (c: Buffer) => chunks.push(c))
    await once(res, 'end')
    expect(JSON.parse(Buffer.concat(chunks).toString())).toEqual({
      success: false,
      error: 'Demasiadas filas',
      codigo: 'DEMASIADAS_FILAS',
      detalles: [{ campo: 'body', mensaje: `una importación admite como máximo ${MAX_ROWS} filas (IMPORT_MAX_ROWS); divida el fichero` }],
    })
    if (!req.socket!.destroyed) await once(req.socket!, 'close')
    expect(await counts()).toEqual(before)
  }, 60_000)

  it('while the body still arrives: no transaction held, the checked rows on disk encrypted; nothing left after', async () => {
    const before = await counts()
    const req = post({ 'transfer-encoding': 'chunked' })
    const answer = once(req, 'response') as Promise<[IncomingMessage]>
    req.write(body(1200)) // more than two batches: checked and kept
    let files: string[] = []
    for (let i = 0; i < 400 && (files = spoolFiles()).every((f) => readFileSync(f).length < 100_000); i++) await new Promise((resolve) => setTimeout(resolve, 25))
    const kept = readFileSync(files[0]!)
    expect(kept.length).toBeGreaterThan(100_000)
    expect(kept.includes('Ana 7')).toBe(false)
    expect(kept.includes('Calle Mayor')).toBe(false)
    // The body is not finished: no transaction is open, so another request answers (embedded: on the one connection).
    await transactionsDone()
    const list = await app.inject({ method: 'GET', url: '/denuncias?limit=1', headers: { authorization: `Bearer ${token}` } })
    expect(list.statusCode).toBe(200)
    expect(await counts()).toEqual(before)
    req.end(body(300))
    const [res] = await answer
    expect(res.statusCode).toBe(201)
    res.resume()
    await once(res, 'end')
    expect((await counts()).denuncias).toBe(before.denuncias + 1500)
    expect(spoolFiles()).toEqual([])
    // A refused import and a dry run leave nothing behind either.
    for (const url of ['/denuncias/importar', '/denuncias/importar?simular=true']) {
      const refused = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, payload: body(600) + '{"tipo": 1}\n' })
      expect(refused.statusCode).toBe(url.includes('simular') ? 200 : 400)
    }
    expect(readdirSync(spoolRoot).filter((d) => d.startsWith('policia-import-'))).toEqual([])
  }, 60_000)

  it('a TMPDIR that cannot take the import: 503 with Retry-After, nothing written; a dry run needs none', async () => {
    const before = await counts()
    process.env.TMPDIR = join(spoolRoot, 'missing', 'dir')
    try {
      const res = await app.inject({ method: 'POST', url: '/denuncias/importar', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, payload: body(3) })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('30')
      expect(res.json()).toMatchObject({ success: false, codigo: 'SERVICIO_NO_DISPONIBLE', detalles: [{ campo: 'body', mensaje: expect.stringContaining('espacio temporal') }] })
      const dry = await app.inject({ method: 'POST', url: '/denuncias/importar?simular=true', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, payload: body(3) })
      expect(dry.statusCode).toBe(200)
    } finally {
      process.env.TMPDIR = spoolRoot
    }
    expect(await counts()).toEqual(before)
  })
})
