/**
 * `npm run bench:hostile`: what the worst-shape 1 MiB bodies
 * (test/helpers/hostile-shapes.ts) cost the server (docs/operator-guide.md "Hostile input": each answers
 * its 400 in under 50 ms of CPU), and what they do to everyone else's
 * latency. Not part of `npm test`; embedded by default, PostgreSQL and
 * Redis when DATABASE_URL / REDIS_URL are set (a throw-away database).
 *
 * 1. CPU per request: each shape sent BENCH_RUNS times (default 20) through
 *    app.inject, process.cpuUsage() around each; median and max. A valid
 *    1 MiB create is measured beside them for comparison.
 * 2. /health while they are sent: a worker thread (its own event loop, so
 *    the client does not slow the server it measures) asks GET /health every
 *    10 ms over real HTTP for BENCH_SECONDS (default 10) each: alone, while
 *    a second client posts the shapes one every 1.2 s (the reported
 *    attack), and while it posts them back to back.
 *
 *   BENCH_RUNS=20 BENCH_SECONDS=10 npm run bench:hostile
 */
import { Worker } from 'node:worker_threads'
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'
import { HOSTILE_SHAPES } from '../helpers/hostile-shapes.js'

const runs = Number(process.env.BENCH_RUNS ?? 20)
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const server = await startBenchServer()
const { app, base } = server

const token = (await app.inject({ method: 'POST', url: '/auth/login', payload: BENCH_ADMIN })).json().data.token as string
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
const valid = {
  denunciante_nombre: 'Bench', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'x'.repeat(20_000),
  adjuntos: Array.from({ length: 200 }, (_, i) => Object.fromEntries(Array.from({ length: 45 }, (_, k) => [`c${k}`, `${i}-${k}-${'x'.repeat(80)}`]))),
}
const cases = [
  ...HOSTILE_SHAPES.map((s) => ({ name: s.name, body: s.body(), expect: 400 })),
  { name: 'for comparison: a valid 1 MiB create (9,000 values)', body: JSON.stringify(valid), expect: 201 },
]

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!

/** One request at a time, so process CPU time between start and answer is this request's. */
async function cpuOf (body: string | Buffer): Promise<{ ms: number[], status: number, size: number }> {
  const ms: number[] = []
  let status = 0
  for (let i = 0; i < runs + 2; i++) {
    const before = process.cpuUsage()
    const res = await app.inject({ method: 'POST', url: '/denuncias', headers, payload: body })
    const used = process.cpuUsage(before)
    status = res.statusCode
    if (i >= 2) ms.push((used.user + used.system) / 1000) // the first two warm up the JIT
  }
  return { ms, status, size: Buffer.byteLength(body) }
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const { base, seconds, bodies, headers } = workerData
async function probe (until) {
  const times = []
  while (Date.now() < until) {
    const t0 = performance.now()
    const res = await fetch(base + '/health')
    await res.arrayBuffer()
    times.push(performance.now() - t0)
    await new Promise((r) => setTimeout(r, 10))
  }
  return times
}
/** Posts the bodies in turn until the deadline, waiting pause ms after each answer. */
async function flood (until, pause) {
  let sent = 0, refused = 0, i = 0
  while (Date.now() < until) {
    const res = await fetch(base + '/denuncias', { method: 'POST', headers, body: bodies[i++ % bodies.length] })
    await res.arrayBuffer()
    sent++
    if (res.status === 400) refused++
    if (pause > 0) await new Promise((r) => setTimeout(r, pause))
  }
  return { sent, refused }
}
async function phase (pause) {
  parentPort.postMessage({ phase: 'start' })
  const until = Date.now() + seconds * 1000
  const [times, load] = await Promise.all([probe(until), pause === null ? null : flood(until, pause)])
  parentPort.postMessage({ phase: 'end', times, load })
}
;(async () => {
  await phase(null)
  await phase(1200)
  await phase(0)
})()
`

interface Phase { times: number[], load: { sent: number, refused: number } | null, busy: number }

/** The three phases of the worker, each with the share of time the server's event loop was busy. */
async function healthUnderLoad (): Promise<Phase[]> {
  const bodies = HOSTILE_SHAPES.map((s) => s.body())
  const worker = new Worker(WORKER, { eval: true, workerData: { base, seconds, bodies, headers } })
  const phases: Phase[] = []
  let elu = performance.eventLoopUtilization()
  return await new Promise((resolve, reject) => {
    worker.on('message', (m: { phase: 'start' } | { phase: 'end', times: number[], load: Phase['load'] }) => {
      if (m.phase === 'start') { elu = performance.eventLoopUtilization(); return }
      phases.push({ times: m.times, load: m.load, busy: performance.eventLoopUtilization(elu).utilization })
      if (phases.length === 3) { void worker.terminate(); resolve(phases) }
    })
    worker.once('error', reject)
  })
}

const fmt = (n: number): string => n.toFixed(1)
try {
  const lines: string[] = ['| body (POST /denuncias) | size | status | CPU ms median | CPU ms max |', '|---|---|---|---|---|']
  for (const c of cases) {
    const r = await cpuOf(c.body)
    if (r.status !== c.expect) throw new Error(`${c.name}: expected ${c.expect}, got ${r.status}`)
    lines.push(`| ${c.name} | ${(r.size / 1024).toFixed(0)} KiB | ${r.status} | ${fmt(quantile(r.ms, 0.5))} | ${fmt(Math.max(...r.ms))} |`)
  }
  const [alone, paced, flood] = await healthUnderLoad()
  const row = (name: string, p: Phase): string =>
    `| ${name} | ${p.load === null ? '—' : `${p.load.sent} (${p.load.refused} × 400)`} | ${(p.busy * 100).toFixed(0)} % | ${p.times.length} | ${fmt(quantile(p.times, 0.5))} | ${fmt(quantile(p.times, 0.95))} | ${fmt(quantile(p.times, 0.99))} | ${fmt(Math.max(...p.times))} |`
  lines.push('', `GET /health every 10 ms for ${seconds} s over HTTP: alone; while one client posts the bodies above one every 1.2 s (the reported attack); and back to back:`, '',
    '| load | hostile bodies sent | server event loop busy | /health requests | p50 ms | p95 ms | p99 ms | max ms |', '|---|---|---|---|---|---|---|---|',
    row('none', alone!), row('one body every 1.2 s', paced!), row('bodies back to back', flood!))
  process.stdout.write(`\n${app.databaseKind} database, ${app.stores.kind} stores, ${runs} runs per body\n\n${lines.join('\n')}\n`)
} finally {
  await server.stop()
}
