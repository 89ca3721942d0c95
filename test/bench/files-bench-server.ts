/**
 * The service side of `npm run bench:files` (test/bench/files.bench.ts), a
 * child process of its own so that what it measures is the service alone
 * (docs/performance.md "Evidence files"): the bench server with the files
 * store the parent's environment names (FILES_DIR or FILES_S3_*).
 *
 * Over IPC: `ready` (base, token, a denuncia and an atestado to attach
 * to); `start` with `timingOnly` does nothing (the timed transfers, as the
 * service runs: no forced collection, no sampler); else `start` resets the kernel's peak RSS (/proc/self/clear_refs, 5)
 * after a full collection; `stop` answers the RSS then and the peak since
 * (VmHWM: every page the process touched, not a sample), and the peak of
 * heap + external memory sampled every 10 ms, or with `live` every 50 ms
 * after a full collection (what is held, garbage left out). RSS alone
 * misses what fits in pages the process already holds (a 40 MB Buffer
 * allocated at `start` showed as 11 MB of RSS growth once, 40 MB the next
 * time): the live peak is the figure that cannot hide a file held whole.
 * `exit` stops it.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'

export type FilesBenchMessage =
  | { type: 'ready', kind: string, store: string, base: string, token: string, denuncia: string, atestado: string }
  | { type: 'started' }
  | { type: 'stopped', rssBefore: number, rssPeak: number, heldBefore: number, heldPeak: number }

const send = (m: FilesBenchMessage): void => { process.send!(m) }
const vmHwm = (): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024

const server = await startBenchServer({ env: { METRICS_PORT: '0', FILE_MAX_BYTES: String(64 * 2 ** 20) } })
const token = (await server.json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
const denuncia = (await server.json('POST', '/denuncias', { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle Mayor', descripcion: 'Banco de pruebas' }, token)).data._id as string
const atestado = (await server.json('POST', '/atestados', { tipo: 'penal' }, token)).data._id as string
send({ type: 'ready', kind: server.app.databaseKind, store: server.app.files.describe(), base: server.base, token, denuncia, atestado })

let rssBefore = 0
let heldBefore = 0
let heldPeak = 0
let sampler: NodeJS.Timeout | undefined
/** What JavaScript holds: the heap and the memory outside it (Buffers), garbage not yet collected included. */
const held = (): number => { const m = process.memoryUsage(); return m.heapUsed + m.external }
let timingOnly = false
process.on('message', (msg: { type: 'start' | 'stop' | 'exit', live?: boolean, timingOnly?: boolean }) => {
  if (msg.type === 'start' && msg.timingOnly === true) {
    // A forced full collection leaves this process's streaming 2-3 times slower for a while (measured: 1,000 → 350 MiB/s per download): timed transfers get none.
    timingOnly = true
    send({ type: 'started' })
  } else if (msg.type === 'stop' && timingOnly) {
    timingOnly = false
    send({ type: 'stopped', rssBefore: 0, rssPeak: 0, heldBefore: 0, heldPeak: 0 })
  } else if (msg.type === 'start') {
    globalThis.gc?.()
    writeFileSync('/proc/self/clear_refs', '5')
    rssBefore = process.memoryUsage.rss()
    heldBefore = heldPeak = held()
    // live: a full collection before each sample, so the peak is what is held, not garbage (slows the transfer).
    sampler = setInterval(() => { if (msg.live === true) globalThis.gc?.(); heldPeak = Math.max(heldPeak, held()) }, msg.live === true ? 50 : 10)
    send({ type: 'started' })
  } else if (msg.type === 'stop') {
    clearInterval(sampler)
    send({ type: 'stopped', rssBefore, rssPeak: vmHwm(), heldBefore, heldPeak: Math.max(heldPeak, held()) })
  } else {
    void server.stop().finally(() => process.exit(0))
  }
})
