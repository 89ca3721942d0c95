/**
 * Storage outages answer 503 (docs/user-guide.md "Evidence files"): an S3
 * store (the test's own s3rver) stopped in the middle of an upload sent
 * slowly over a real connection, and a download while it is down, answer
 * 503 `Servicio no disponible` in the envelope with Retry-After, log what
 * is down, add no file to the record (its version unchanged) and leave no
 * staged object; once the store is back, uploads work again without a
 * restart. A full files volume (ENOSPC, a tmpfs: needs root) is
 * test/faults/file-store-outage.test.ts, with the S3 outage again on the
 * service as a process.
 */
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DETAILS } from '../../core/errors.js'
import { errorOf } from '../helpers/errors.js'
import { ok } from '../helpers/http.js'
import { startFileStore, type TestFileStore } from '../helpers/file-stores.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { listenApp } from '../helpers/free-port.js'
import { wire, type WireAnswer } from '../helpers/wire.js'

const MiB = 1024 * 1024
const pdf = (n: number): Buffer => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(n - 9)])
const DENUNCIA = { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle', descripcion: 'x' }

/** The 503 of a file store that is down: the envelope naming the store, Retry-After in whole seconds. */
function expectStoreDown (got: WireAnswer, what: string): void {
  expect([got.status, got.failed, got.headers['retry-after'], JSON.parse(got.body.toString() || '{}')], what)
    .toEqual([503, undefined, '30', errorOf('SERVICIO_NO_DISPONIBLE', [{ campo: 'archivos', mensaje: DETAILS.ALMACEN_ARCHIVOS_NO_DISPONIBLE }])])
}

function harness (env: () => Record<string, string>): { t: () => TestApp, port: () => number, lines: string[] } {
  let t: TestApp | undefined
  let port = 0
  const lines: string[] = []
  beforeAll(async () => {
    t = await startTestApp({ env: { ...env(), LOG_LEVEL: 'warn' }, logStream: new Writable({ write (chunk, _e, done) { lines.push(String(chunk)); done() } }) })
    port = Number(new URL(await listenApp(t.app)).port)
  })
  afterAll(async () => { await t?.h.close() })
  return { t: () => t!, port: () => port, lines }
}

const upload = (port: number, token: string, url: string, pieces: Buffer[], extra: { gapMs?: number, onPiece?: (i: number) => Promise<void> } = {}): Promise<WireAnswer> => wire(port, {
  method: 'POST',
  path: `${url}?nombre=prueba.pdf`,
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/pdf', 'content-length': String(pieces.reduce((n, p) => n + p.length, 0)) },
  pieces,
  ...extra,
})

/** The record's version and its files, read back through the API. */
async function stateOf (t: TestApp, id: string): Promise<{ version: number, files: string[] }> {
  const rec = ok(await t.admin.get(`/denuncias/${id}`))
  return { version: rec._version, files: (rec.adjuntos ?? []).map((f: any) => f.id) }
}

describe('an S3 store lost in the middle of an upload', () => {
  let store: TestFileStore
  beforeAll(async () => { store = await startFileStore('s3') })
  const h = harness(() => store.env)
  afterAll(async () => { await store?.close() })

  it('answers 503 with Retry-After, adds nothing; downloads meanwhile 503; back, uploads work again without a restart', async () => {
    const t = h.t()
    const rec = ok(await t.admin.post('/denuncias', DENUNCIA), 201)
    const url = `/denuncias/${rec._id}/archivos/adjuntos`
    const first = await upload(h.port(), t.token, url, [pdf(20_000)])
    expect(first.status, first.body.toString()).toBe(201)
    const kept = JSON.parse(first.body.toString()).data.archivo
    const before = await stateOf(t, rec._id)

    // 7 MiB sent a piece at a time: the first 5 MiB part goes to the store, then the store is gone.
    const body = pdf(7 * MiB)
    const pieces = Array.from({ length: 7 }, (_, i) => body.subarray(i * MiB, (i + 1) * MiB))
    const cut = await upload(h.port(), t.token, url, pieces, { gapMs: 150, onPiece: async (i) => { if (i === 5) await store.s3!.stop() } })
    expectStoreDown(cut, 'the upload')
    expect(await stateOf(t, rec._id)).toEqual(before)

    const down = await wire(h.port(), { path: `${url}/${kept.id}`, headers: { authorization: `Bearer ${t.token}` } })
    expectStoreDown(down, 'a download')
    const logged = h.lines.flatMap((l) => l.split('\n')).filter((l) => l !== '').map((l) => JSON.parse(l)).filter((l) => /^file store \(s3 .*\) unavailable$/.test(l.msg))
    expect(logged.length).toBeGreaterThanOrEqual(2)
    expect(logged[0]).toMatchObject({ level: 40, dependency: expect.stringContaining(`bucket ${store.s3!.bucket}`), reason: expect.any(String) })

    await store.s3!.restart()
    expect((await store.objects()).filter((o) => !/^[0-9a-f]{2}\/[0-9a-f]{64}$/.test(o)), 'nothing staged left behind').toEqual([])
    expect(await stateOf(t, rec._id)).toEqual(before)
    const again = await upload(h.port(), t.token, url, [pdf(30_000)])
    expect(again.status, again.body.toString()).toBe(201)
    const back = await wire(h.port(), { path: `${url}/${kept.id}`, headers: { authorization: `Bearer ${t.token}` } })
    expect([back.status, back.complete, back.body.length]).toEqual([200, true, 20_000])
  })
})
