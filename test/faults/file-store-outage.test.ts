/**
 * docs/operator-guide.md "Evidence files": file store outages answer 503
 * with Retry-After, on the service run as an operator runs it (a process:
 * `node --import tsx bin/server.ts`, embedded database, no Redis). One
 * instance keeps FILES_DIR on a 256 KiB tmpfs (needs root: mount) that an
 * upload overflows and a filler then fills: ENOSPC. Another keeps its files
 * in an S3 bucket on the test's own s3rver, stopped (every connection
 * dropped) in the middle of a 7 MiB upload sent slowly, then restarted.
 * Each: 503 `Servicio no disponible` in the envelope with Retry-After,
 * nothing added to the record (its version unchanged), nothing staged left
 * behind, the log line naming the store; and uploads work again once the
 * store is back, without restarting the instance.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startS3Server, type S3Server } from '../helpers/s3-server.js'
import { wire, type WireAnswer } from '../helpers/wire.js'
import { createInstance, type Instance, type InstanceEnv } from './helpers/instances.js'
import { ADMIN, call, login } from './helpers/stack.js'

const MiB = 1024 * 1024
const KEY = Buffer.alloc(32, 5).toString('base64')
const pdf = (n: number): Buffer => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(n - 9)])
const DENUNCIA = { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle', descripcion: 'x' }

function run (command: string, args: string[]): { status: number | null, out: string } {
  const r = spawnSync(command, args, { encoding: 'utf8' })
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error?.message ?? ''}` }
}

/** An embedded instance (no DATABASE_URL, no REDIS_URL) with `env` for its files. */
async function embedded (dir: string, name: string, env: Record<string, string>): Promise<Instance> {
  const instance = await createInstance(name, dir, {
    DATA_DIR: join(dir, `${name}-data`),
    JWT_SECRET: 'fault-test-secret-that-is-long-enough-for-hs256',
    ENCRYPTION_KEY: KEY,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    ...env,
  } as unknown as InstanceEnv)
  await instance.start()
  return instance
}

function expectStoreDown (got: WireAnswer, what: string): void {
  expect([got.status, got.headers['retry-after'], JSON.parse(got.body.toString() || '{}')], what).toMatchObject([503, '30', { success: false, error: 'Servicio no disponible', codigo: 'SERVICIO_NO_DISPONIBLE', detalles: [{ campo: 'archivos' }] }])
}

const upload = (port: number, token: string, url: string, pieces: Buffer[], extra: { gapMs?: number, onPiece?: (i: number) => Promise<void> } = {}): Promise<WireAnswer> => wire(port, {
  method: 'POST',
  path: `${url}?nombre=prueba.pdf`,
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/pdf', 'content-length': String(pieces.reduce((n, p) => n + p.length, 0)) },
  pieces,
  ...extra,
})

async function stateOf (base: string, token: string, id: string): Promise<{ version: number, files: string[] }> {
  const res = await call(base, 'GET', `/denuncias/${id}`, { token })
  expect(res.status).toBe(200)
  return { version: res.body.data._version, files: (res.body.data.adjuntos ?? []).map((f: any) => f.id) }
}

describe('file store outages, on the service as a process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'faults-archivos-'))
  const volume = join(dir, 'archivos')
  let mounted = false
  let s3: S3Server | undefined
  const instances: Instance[] = []

  beforeAll(() => {
    spawnSync('mkdir', ['-p', volume])
    const m = run('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0755', 'tmpfs', volume])
    if (m.status !== 0) throw new Error(`this fault test mounts a 256 KiB tmpfs as FILES_DIR and needs root (CAP_SYS_ADMIN): mount -t tmpfs failed (${m.status}): ${m.out.trim()}`)
    mounted = true
  })

  afterAll(async () => {
    for (const i of instances) await i.stop().catch(() => undefined)
    await s3?.close().catch(() => undefined)
    if (mounted) {
      const u = run('umount', [volume])
      if (u.status !== 0) console.error(`umount ${volume} failed: ${u.out}`)
    }
    try { rmdirSync(volume) } catch { /* not empty or gone */ }
    rmSync(dir, { recursive: true, force: true })
  })

  it('a full FILES_DIR (ENOSPC): 503 with Retry-After, nothing added or left behind; space freed, uploads work again', async () => {
    const instance = await embedded(dir, 'lleno', { FILES_DIR: volume })
    instances.push(instance)
    const token = await login(instance.url)
    const rec = await call(instance.url, 'POST', '/denuncias', { token, body: DENUNCIA })
    expect(rec.status).toBe(201)
    const id = rec.body.data._id as string
    const url = `/denuncias/${id}/archivos/adjuntos`
    const before = await stateOf(instance.url, token, id)
    const staged = (): string[] => { try { return readdirSync(join(volume, '.tmp')) } catch { return [] } }

    expectStoreDown(await upload(instance.port, token, url, [pdf(200_000), pdf(200_000)], { gapMs: 50 }), 'larger than the volume')
    expect([await stateOf(instance.url, token, id), staged()]).toEqual([before, []])

    const filler = join(volume, 'relleno')
    let size = 256 * 1024
    for (;;) {
      try { writeFileSync(filler, Buffer.alloc(size)); break } catch { size -= 4096 }
      if (size <= 0) throw new Error('could not fill the tmpfs')
    }
    expectStoreDown(await upload(instance.port, token, url, [pdf(20_000)]), 'a full volume')
    expect([await stateOf(instance.url, token, id), staged()]).toEqual([before, []])
    expect(readFileSync(join(dir, 'lleno.log'), 'utf8')).toMatch(new RegExp(`"reason":"ENOSPC".*"msg":"file store \\(directory ${volume}\\) unavailable"`))

    unlinkSync(filler)
    const again = await upload(instance.port, token, url, [pdf(20_000)])
    expect(again.status, again.body.toString()).toBe(201)
    expect((await stateOf(instance.url, token, id)).files).toHaveLength(1)
  })

  it('an S3 store lost in the middle of an upload: 503 with Retry-After, nothing added; downloads 503 meanwhile; back, uploads work again', async () => {
    s3 = await startS3Server()
    const instance = await embedded(dir, 'cubo', s3.env('policia/'))
    instances.push(instance)
    const token = await login(instance.url)
    const rec = await call(instance.url, 'POST', '/denuncias', { token, body: DENUNCIA })
    expect(rec.status).toBe(201)
    const id = rec.body.data._id as string
    const url = `/denuncias/${id}/archivos/adjuntos`
    const first = await upload(instance.port, token, url, [pdf(20_000)])
    expect(first.status, first.body.toString()).toBe(201)
    const kept = JSON.parse(first.body.toString()).data.archivo
    const before = await stateOf(instance.url, token, id)

    const body = pdf(7 * MiB)
    const pieces = Array.from({ length: 7 }, (_, i) => body.subarray(i * MiB, (i + 1) * MiB))
    const server = s3
    expectStoreDown(await upload(instance.port, token, url, pieces, { gapMs: 200, onPiece: async (i) => { if (i === 5) await server.stop() } }), 'the upload')
    expect(await stateOf(instance.url, token, id)).toEqual(before)
    expectStoreDown(await wire(instance.port, { path: `${url}/${kept.id}`, headers: { authorization: `Bearer ${token}` } }), 'a download')
    expect(readFileSync(join(dir, 'cubo.log'), 'utf8')).toMatch(/"msg":"file store \(s3 http:\/\/127\.0\.0\.1:\d+ bucket policia-pruebas prefix policia\/\) unavailable"/)

    await s3.restart()
    expect((await s3.keys()).filter((k) => !/^policia\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(k)), 'nothing staged left behind').toEqual([])
    const again = await upload(instance.port, token, url, [pdf(30_000)])
    expect(again.status, again.body.toString()).toBe(201)
    const back = await wire(instance.port, { path: `${url}/${kept.id}`, headers: { authorization: `Bearer ${token}` } })
    expect([back.status, back.complete, back.body.length]).toEqual([200, true, 20_000])
    expect(instance.running()).toBe(true)
  })
})
