/**
 * `npm run bench:files` (docs/performance.md "Evidence files"): a 50 MiB
 * evidence file uploaded and downloaded through a real listening server in
 * a child process (test/bench/files-bench-server.ts), plain
 * (denuncias.adjuntos) and encrypted at rest (atestados.documentos_adjuntos),
 * on the directory store and on an S3 bucket (s3rver, in this process, as
 * the tests start it). Reports each transfer's MB/s beside the disk's own
 * (a plain 50 MiB fs-stream write with fsync, and read, in the same
 * directory) and the service's peak memory growth over an upload and its
 * download (RSS, and the live heap + external memory in a second pass:
 * files-bench-server.ts), which must stay within 32 MB.
 *
 *   METRICS_PORT=0 npm run bench:files                 (embedded database)
 *   BENCH_FILE_STORES=directory npm run bench:files    (one store only)
 */
import { fork } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { startS3Server, type S3Server } from '../helpers/s3-server.js'
import type { FilesBenchMessage } from './files-bench-server.js'

const SIZE = 50 * 2 ** 20
const LIMIT_MB = 32
const CHUNK = randomBytes(2 ** 20)
const mbs = (seconds: number): string => (SIZE / 2 ** 20 / seconds).toFixed(0)

/** 50 MiB in 64 KiB chunks, each made different by its index (so no two MiB are equal). */
function body (): Readable {
  return Readable.from((function * () {
    for (let i = 0; i < SIZE / 65536; i++) {
      const c = Buffer.from(CHUNK.subarray((i % 16) * 65536, (i % 16 + 1) * 65536))
      c.writeUInt32BE(i, 0)
      yield c
    }
  })())
}

async function timed (fn: () => Promise<void>): Promise<number> {
  const start = performance.now()
  await fn()
  return (performance.now() - start) / 1000
}

/** The disk's own speed: 50 MiB written with an fs stream and flushed, then read back. */
async function diskSpeed (dir: string): Promise<{ write: number, read: number }> {
  const file = join(dir, 'disco.bin')
  const write = await timed(async () => {
    await pipeline(body(), createWriteStream(file))
    const fh = await open(file, 'r+')
    try { await fh.sync() } finally { await fh.close() }
  })
  const read = await timed(async () => { for await (const _ of createReadStream(file)) { /* drained */ } })
  rmSync(file)
  return { write, read }
}

/** One HTTP request with a streamed body (or none); the answer's status, SHA-256 of its body and length. */
async function call (base: string, method: string, path: string, token: string, upload?: Readable): Promise<{ status: number, sha256: string, bytes: number, text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(upload !== undefined && { 'content-type': 'application/octet-stream', 'content-length': String(SIZE) }) } }, (res) => {
      const hash = createHash('sha256')
      let bytes = 0
      let text = ''
      // The text only of small answers (the upload's JSON, an error), not of the file.
      res.on('data', (c: Buffer) => { hash.update(c); bytes += c.length; if (bytes <= 65536) text += c.toString('utf8') })
      res.on('end', () => { resolve({ status: res.statusCode!, sha256: hash.digest('hex'), bytes, text }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (upload === undefined) req.end()
    else upload.pipe(req)
  })
}

interface Row { store: string, file: string, up: number, down: number, growth: number, heldGrowth: number }

async function benchStore (name: string, env: Record<string, string>): Promise<Row[]> {
  const child = fork(fileURLToPath(new URL('./files-bench-server.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { ...process.env, METRICS_PORT: '0', ...env },
  })
  const exited = once(child, 'exit')
  const next = async <T extends FilesBenchMessage['type']>(type: T): Promise<Extract<FilesBenchMessage, { type: T }>> => {
    for (;;) {
      const [m] = await Promise.race([once(child, 'message'), exited.then(() => { throw new Error('the bench server exited') })]) as [FilesBenchMessage]
      if (m.type === type) return m as Extract<FilesBenchMessage, { type: T }>
    }
  }
  const rows: Row[] = []
  try {
    const ready = await next('ready')
    console.log(`${name}: ${ready.kind} database, ${ready.store}`)
    const expected = createHash('sha256')
    for await (const c of body()) expected.update(c as Buffer)
    const sha256 = expected.digest('hex')
    /** One upload and its download, timed, between `start` and `stop`: the child's memory figures. */
    const transfer = async (path: string, live: boolean): Promise<{ up: number, down: number, m: Extract<FilesBenchMessage, { type: 'stopped' }> }> => {
      child.send({ type: 'start', live })
      await next('started')
      let id = ''
      const up = await timed(async () => {
        const res = await call(ready.base, 'POST', `${path}?nombre=video.bin`, ready.token, body())
        if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${res.text}`)
        const archivo = JSON.parse(res.text).data.archivo
        if (archivo.sha256 !== sha256) throw new Error('the stored SHA-256 is not the upload\'s')
        id = archivo.id as string
      })
      const down = await timed(async () => {
        const res = await call(ready.base, 'GET', `${path}/${id}`, ready.token)
        if (res.status !== 200 || res.sha256 !== sha256 || res.bytes !== SIZE) throw new Error(`download answered ${res.status}, ${res.bytes} bytes`)
      })
      child.send({ type: 'stop' })
      return { up, down, m: await next('stopped') }
    }
    for (const [file, path] of [['plain', `/denuncias/${ready.denuncia}/archivos/adjuntos`], ['encrypted', `/atestados/${ready.atestado}/archivos/documentos_adjuntos`]] as const) {
      // Timed without the live sampler's collections; then again, sampled live.
      const { up, down, m } = await transfer(path, false)
      const live = (await transfer(path, true)).m
      rows.push({ store: name, file, up, down, growth: (m.rssPeak - m.rssBefore) / 2 ** 20, heldGrowth: (live.heldPeak - live.heldBefore) / 2 ** 20 })
    }
  } finally {
    if (child.connected) child.send({ type: 'exit' })
    await exited
  }
  return rows
}

const dir = mkdtempSync(join(tmpdir(), 'policia-bench-files-'))
const stores = (process.env.BENCH_FILE_STORES ?? 'directory,s3').split(',')
let s3: S3Server | undefined
try {
  const disk = await diskSpeed(dir)
  const rows: Row[] = []
  if (stores.includes('directory')) rows.push(...await benchStore('directory', { FILES_DIR: join(dir, 'archivos') }))
  if (stores.includes('s3')) {
    s3 = await startS3Server()
    rows.push(...await benchStore('s3 (s3rver)', s3.env('policia/archivos')))
  }
  console.log(`\nOne 50 MiB file through HTTP, the service in its own process; the disk itself (${dir}): write+fsync ${mbs(disk.write)} MB/s, read ${mbs(disk.read)} MB/s\n`)
  console.log('| store | file | upload s | upload MB/s | of disk write | download s | download MB/s | of disk read | peak RSS growth (MB) | peak live heap + external growth (MB) |\n|---|---|---|---|---|---|---|---|---|---|')
  for (const r of rows) {
    console.log(`| ${r.store} | ${r.file} | ${r.up.toFixed(2)} | ${mbs(r.up)} | ${Math.round(100 * disk.write / r.up)} % | ${r.down.toFixed(2)} | ${mbs(r.down)} | ${Math.round(100 * disk.read / r.down)} % | ${r.growth.toFixed(1)} | ${r.heldGrowth.toFixed(1)} |`)
  }
  const over = rows.filter((r) => Math.max(r.growth, r.heldGrowth) > LIMIT_MB)
  if (over.length > 0) throw new Error(`memory grew past ${LIMIT_MB} MB: ${over.map((r) => `${r.store} ${r.file} RSS ${r.growth.toFixed(1)} MB, live heap + external ${r.heldGrowth.toFixed(1)} MB`).join('; ')}`)
} finally {
  await s3?.close()
  rmSync(dir, { recursive: true, force: true })
}
