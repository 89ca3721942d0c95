/**
 * `npm run bench:files` (docs/performance.md "Evidence files"): a 50 MiB
 * evidence file uploaded and downloaded through a real listening server in
 * a child process (test/bench/files-bench-server.ts), plain
 * (denuncias.adjuntos) and encrypted at rest
 * (atestados.documentos_adjuntos), on the directory store and on an S3
 * bucket (s3rver, in this process, as the tests start it). Measured in the
 * same run, alternating round by round (the machine is shared): the disk's
 * own speed (a plain 50 MiB fs-stream write with fsync, and read, in the
 * same directory) and the ceiling, a bare node:http server in a child
 * process of its own that stores the same body in the same directory with
 * fsync and serves it back (test/bench/files-ceiling-server.ts), also with
 * SHA-256 on the way in, as the service must hash. Reports the medians'
 * MB/s and their shares of the disk and of the ceiling, and, in untimed
 * passes after the timed rounds (their forced collections slow the process
 * down: files-bench-server.ts), the service's peak memory growth over an
 * upload and its download (RSS, and the live heap + external memory),
 * which must stay within 32 MB.
 *
 *   METRICS_PORT=0 npm run bench:files                 (embedded database)
 *   BENCH_FILE_STORES=directory npm run bench:files    (one store only)
 *   BENCH_FILE_ROUNDS=3 npm run bench:files            (rounds; 5 unless told)
 *   BENCH_FILE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/p' npm run bench:files
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
import type { CeilingMessage } from './files-ceiling-server.js'

const SIZE = 50 * 2 ** 20
const LIMIT_MB = 32
const ROUNDS = Number(process.env.BENCH_FILE_ROUNDS ?? 5)
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

/**
 * One HTTP request with a streamed body (or none); the answer's status,
 * SHA-256 of its body and length, and `wait`: the seconds when no file
 * byte moves (an upload's, from its last byte sent to the answer; a
 * download's, to the answer's first byte), the server's cost per request
 * rather than per byte.
 */
async function call (base: string, method: string, path: string, token: string, upload?: Readable): Promise<{ status: number, sha256: string, bytes: number, text: string, wait: number }> {
  return new Promise((resolve, reject) => {
    let sent = performance.now()
    const req = request(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(upload !== undefined && { 'content-type': 'application/octet-stream', 'content-length': String(SIZE) }) } }, (res) => {
      const wait = (performance.now() - sent) / 1000
      const hash = createHash('sha256')
      let bytes = 0
      let text = ''
      // The text only of small answers (the upload's JSON, an error), not of the file.
      res.on('data', (c: Buffer) => { hash.update(c); bytes += c.length; if (bytes <= 65536) text += c.toString('utf8') })
      res.on('end', () => { resolve({ status: res.statusCode!, sha256: hash.digest('hex'), bytes, text, wait }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.on('finish', () => { if (upload !== undefined) sent = performance.now() })
    if (upload === undefined) req.end()
    else upload.pipe(req)
  })
}

/** A bench child (tsx, like the service's) and its IPC messages, awaited by type. */
function spawn<M extends { type: string }> (file: string, env: Record<string, string>): { send: (m: object) => void, next: <T extends M['type']>(type: T) => Promise<Extract<M, { type: T }>>, close: () => Promise<void> } {
  // BENCH_FILE_NODE_ARGS: more flags for both children (`--cpu-prof --cpu-prof-dir=…`, `--trace-gc`).
  const more = (process.env.BENCH_FILE_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), {
    execArgv: ['--import', 'tsx', '--expose-gc', ...more],
    env: { ...process.env, METRICS_PORT: '0', ...env },
  })
  // Its pid names its CPU profile and its warnings.
  console.log(`${file}: pid ${child.pid}`)
  const exited = once(child, 'exit')
  return {
    send: (m) => { child.send(m) },
    next: async (type) => {
      for (;;) {
        const [m] = await Promise.race([once(child, 'message'), exited.then(() => { throw new Error(`${file} exited`) })]) as [M]
        if (m.type === type) return m as Extract<M, { type: typeof type }>
      }
    },
    close: async () => { if (child.connected) child.send({ type: 'exit' }); await exited },
  }
}

/** Seconds of a timed upload and download, and of their `wait` (call). */
interface Timing { up: number, down: number, upWait: number, downWait: number }
/** Each timed transfer by what was measured (`disk`, `ceiling`, `directory plain`…). */
const samples = new Map<string, Timing[]>()
const ms = (seconds: number): string => (seconds * 1000).toFixed(0)
function sample (what: string, t: Timing): void {
  samples.set(what, [...samples.get(what) ?? [], t])
  console.log(`  ${what}: up ${mbs(t.up)} MB/s (answer ${ms(t.upWait)} ms after the body), down ${mbs(t.down)} MB/s (first byte after ${ms(t.downWait)} ms)`)
}
const median = (a: number[]): number => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]! }

let sha256 = ''
{
  const expected = createHash('sha256')
  for await (const c of body()) expected.update(c as Buffer)
  sha256 = expected.digest('hex')
}

/** The ceiling's store and return of the same body (`hashing`: SHA-256 on the way in), the file then removed. */
async function ceilingTransfer (base: string, dir: string, hashing: boolean): Promise<void> {
  const name = `techo-${hashing ? 'sha' : 'plano'}`
  let upWait = 0
  let downWait = 0
  const up = await timed(async () => {
    const res = await call(base, 'POST', `/${name}${hashing ? '?sha256=1' : ''}`, '', body())
    upWait = res.wait
    const answer = JSON.parse(res.text) as { sha256: string | null, bytes: number }
    if (res.status !== 201 || answer.bytes !== SIZE || (hashing && answer.sha256 !== sha256)) throw new Error(`the ceiling's upload answered ${res.status}: ${res.text}`)
  })
  const down = await timed(async () => {
    const res = await call(base, 'GET', `/${name}`, '')
    downWait = res.wait
    if (res.status !== 200 || res.sha256 !== sha256 || res.bytes !== SIZE) throw new Error(`the ceiling's download answered ${res.status}, ${res.bytes} bytes`)
  })
  rmSync(join(dir, name))
  sample(hashing ? 'ceiling + SHA-256' : 'ceiling', { up, down, upWait, downWait })
}

interface Row { store: string, file: string, growth: number, heldGrowth: number }

/** ROUNDS of the service's plain and encrypted transfers, timed, each round after `between` (the disk, the ceiling); then the memory passes. */
async function benchStore (name: string, env: Record<string, string>, between: () => Promise<void>): Promise<Row[]> {
  const child = spawn<FilesBenchMessage>('./files-bench-server.ts', env)
  const rows: Row[] = []
  try {
    const ready = await child.next('ready')
    console.log(`${name}: ${ready.kind} database, ${ready.store}`)
    /** One upload and its download, timed, between `start` and `stop`: the child's memory figures. */
    const transfer = async (path: string, measure: 'time' | 'rss' | 'live'): Promise<{ t: Timing, m: Extract<FilesBenchMessage, { type: 'stopped' }> }> => {
      child.send({ type: 'start', live: measure === 'live', timingOnly: measure === 'time' })
      await child.next('started')
      let id = ''
      let upWait = 0
      let downWait = 0
      const up = await timed(async () => {
        const res = await call(ready.base, 'POST', `${path}?nombre=video.bin`, ready.token, body())
        upWait = res.wait
        if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${res.text}`)
        const archivo = JSON.parse(res.text).data.archivo
        if (archivo.sha256 !== sha256) throw new Error('the stored SHA-256 is not the upload\'s')
        id = archivo.id as string
      })
      const down = await timed(async () => {
        const res = await call(ready.base, 'GET', `${path}/${id}`, ready.token)
        downWait = res.wait
        if (res.status !== 200 || res.sha256 !== sha256 || res.bytes !== SIZE) throw new Error(`download answered ${res.status}, ${res.bytes} bytes`)
      })
      child.send({ type: 'stop' })
      return { t: { up, down, upWait, downWait }, m: await child.next('stopped') }
    }
    const files = [['plain', `/denuncias/${ready.denuncia}/archivos/adjuntos`], ['encrypted', `/atestados/${ready.atestado}/archivos/documentos_adjuntos`]] as const
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}`)
      await between()
      // Timed as the service runs: no forced collection, no sampler (files-bench-server.ts).
      for (const [file, path] of files) sample(`${name} ${file}`, (await transfer(path, 'time')).t)
    }
    // Then measured, untimed: the RSS peak, and the live heap + external peak.
    for (const [file, path] of files) {
      const { m } = await transfer(path, 'rss')
      const live = (await transfer(path, 'live')).m
      rows.push({ store: name, file, growth: (m.rssPeak - m.rssBefore) / 2 ** 20, heldGrowth: (live.heldPeak - live.heldBefore) / 2 ** 20 })
    }
  } finally {
    await child.close()
  }
  return rows
}

const dir = mkdtempSync(join(tmpdir(), 'policia-bench-files-'))
const stores = (process.env.BENCH_FILE_STORES ?? 'directory,s3').split(',')
const ceiling = spawn<CeilingMessage>('./files-ceiling-server.ts', { BENCH_CEILING_DIR: dir })
let s3: S3Server | undefined
try {
  const { base } = await ceiling.next('ready')
  /** The disk, the ceiling and the ceiling with SHA-256, once: before each round of the service's. */
  const between = async (): Promise<void> => {
    const disk = await diskSpeed(dir)
    sample('disk', { up: disk.write, down: disk.read, upWait: 0, downWait: 0 })
    await ceilingTransfer(base, dir, false)
    await ceilingTransfer(base, dir, true)
  }
  const rows: Row[] = []
  if (stores.includes('directory')) rows.push(...await benchStore('directory', { FILES_DIR: join(dir, 'archivos') }, between))
  if (stores.includes('s3')) {
    s3 = await startS3Server()
    rows.push(...await benchStore('s3 (s3rver)', s3.env('policia/archivos'), between))
  }
  const med = (what: string): Timing => {
    const s = samples.get(what)!
    return { up: median(s.map((t) => t.up)), down: median(s.map((t) => t.down)), upWait: median(s.map((t) => t.upWait)), downWait: median(s.map((t) => t.downWait)) }
  }
  const disk = med('disk')
  const top = med('ceiling')
  const topSha = med('ceiling + SHA-256')
  const pct = (of: number, t: number): string => `${Math.round(100 * of / t)} %`
  console.log(`\nOne 50 MiB file through HTTP, each server in its own process; medians, alternating: of ${samples.get('disk')!.length} transfers for the disk and the ceilings (a round before each of the service's), of ${ROUNDS} for each service row. The disk itself (${dir}): write+fsync ${mbs(disk.up)} MB/s, read ${mbs(disk.down)} MB/s. Ceiling: a bare node:http server, same directory, fsync; with SHA-256 on the way in as the service must hash.\n`)
  console.log('| server | file | upload MB/s | of disk write | of ceiling | of ceiling + SHA-256 | answer after the body (ms) | download MB/s | of disk read | of ceiling | first byte after (ms) | peak RSS growth (MB) | peak live heap + external growth (MB) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  const line = (server: string, file: string, t: Timing, memory: string): void => {
    console.log(`| ${server} | ${file} | ${mbs(t.up)} | ${pct(disk.up, t.up)} | ${pct(top.up, t.up)} | ${pct(topSha.up, t.up)} | ${ms(t.upWait)} | ${mbs(t.down)} | ${pct(disk.down, t.down)} | ${pct(top.down, t.down)} | ${ms(t.downWait)} | ${memory} |`)
  }
  line('ceiling (bare node:http)', '—', top, '— | —')
  line('ceiling + SHA-256', '—', topSha, '— | —')
  for (const r of rows) line(r.store, r.file, med(`${r.store} ${r.file}`), `${r.growth.toFixed(1)} | ${r.heldGrowth.toFixed(1)}`)
  const over = rows.filter((r) => Math.max(r.growth, r.heldGrowth) > LIMIT_MB)
  if (over.length > 0) throw new Error(`memory grew past ${LIMIT_MB} MB: ${over.map((r) => `${r.store} ${r.file} RSS ${r.growth.toFixed(1)} MB, live heap + external ${r.heldGrowth.toFixed(1)} MB`).join('; ')}`)
} finally {
  await ceiling.close()
  await s3?.close()
  rmSync(dir, { recursive: true, force: true })
}
