/**
 * `npm run bench:import`: a CSV of BENCH_IMPORT_ROWS (default 10,000)
 * denuncias imported through the full HTTP stack of a real listening
 * server (docs/user-guide.md "Import (importar)") with every guarantee on:
 * each row validated like a POST, ids in file order, each record's history
 * entry and seal, one transaction. First as `simular=true` (validation and
 * checks only), then for real; the seals of a sample are verified after.
 * Then the bounds (docs/performance.md "Import"): a body of 2,000,000 rows
 * of `,,,,` (simular=true: 413 `Demasiadas filas` at row 100,001) and a
 * real import of BENCH_IMPORT_LARGE_ROWS (default 100,000, the
 * IMPORT_MAX_ROWS default) rows, each with /health asked every 20 ms
 * meanwhile (latency percentiles), the event loop's delay, the process's
 * CPU time and its RSS growth (client and server share the process: the
 * CPU includes making and sending the body).
 * Embedded by default, PostgreSQL and Redis when DATABASE_URL / REDIS_URL
 * are set (use a throw-away database). BENCH_LIVE_HEAP=1 with
 * NODE_OPTIONS=--expose-gc reports the live heap's growth (a full GC
 * before a sample every second) instead of the heap with its garbage.
 * Not part of `npm test`.
 *
 *   [BENCH_IMPORT_ROWS=10000] [BENCH_IMPORT_LARGE_ROWS=100000] DATABASE_URL=postgres://…/bench REDIS_URL=redis://… npm run bench:import
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { dniLetter } from '../../core/field-types/formats/dni.js'
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'

const rows = Number(process.env.BENCH_IMPORT_ROWS ?? 10_000)
const largeRows = Number(process.env.BENCH_IMPORT_LARGE_ROWS ?? 100_000)
const server = await startBenchServer()
const { base, json } = server

const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

/** `work` timed with /health asked every 20 ms meanwhile; its answer and the figures printed under `label`. */
async function underWatch<T> (label: string, work: () => Promise<T>): Promise<T> {
  global.gc?.()
  const rss0 = process.memoryUsage().rss
  let rssMax = rss0
  const heap0 = process.memoryUsage().heapUsed
  let heapMax = heap0
  // BENCH_LIVE_HEAP=1 (with node --expose-gc): a full GC before every 25th sample, so the maximum is of live objects, not of garbage not yet collected.
  const live = process.env.BENCH_LIVE_HEAP === '1' && global.gc !== undefined
  let samples = 0
  const latencies: number[] = []
  let done = false
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  const probe = (async () => {
    while (!done) {
      const t0 = performance.now()
      const res = await fetch(`${base}/health`)
      await res.arrayBuffer()
      latencies.push(performance.now() - t0)
      const m = process.memoryUsage()
      rssMax = Math.max(rssMax, m.rss)
      if (!live) heapMax = Math.max(heapMax, m.heapUsed)
      else if (++samples % 25 === 0) { global.gc!(); heapMax = Math.max(heapMax, process.memoryUsage().heapUsed) }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  try {
    return await work()
  } finally {
    const seconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    done = true
    await probe
    loop.disable()
    const sorted = [...latencies].sort((a, b) => a - b)
    const mb = (n: number): string => (n / 1024 / 1024).toFixed(0)
    console.log(`  ${label}: ${seconds.toFixed(2)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s, RSS ${mb(rss0)} → max ${mb(rssMax)} MB (+${mb(rssMax - rss0)}), ${live ? 'live' : ''} JS heap +${mb(heapMax - heap0)} MB at most; ` +
      `/health (${sorted.length} asked) p50 ${pct(sorted, 0.5).toFixed(1)} / p95 ${pct(sorted, 0.95).toFixed(1)} / p99 ${pct(sorted, 0.99).toFixed(1)} / max ${(sorted.at(-1) ?? 0).toFixed(1)} ms; ` +
      `event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} / max ${(loop.max / 1e6).toFixed(1)} ms`)
  }
}

try {
  const token = (await json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
  const n = Date.now() % 100_000_000
  const agente = (await json('POST', '/personal', { tip: `TIP-BENCH-${n}`, nif: `${String(n).padStart(8, '0')}${dniLetter(n)}`, nombre: 'Ana', apellidos: 'Ruiz', escala: 'oficial' }, token)).data._id as string
  const lines = ['\uFEFFdenunciante_nombre;denunciante_dni;tipo;fecha_hechos;lugar_hechos;descripcion;testigos;agente_asignado;prioridad']
  const tipos = ['hurto', 'robo', 'daños', 'lesiones', 'estafa']
  for (let i = 1; i <= rows; i++) {
    lines.push([`Denunciante ${i}`, i % 10 === 0 ? '12345678Z' : '', tipos[i % 5], `2026-0${1 + i % 9}-1${i % 10} 10:${String(i % 60).padStart(2, '0')}:00`,
      `"Calle Mayor; ${i}"`, `"Sustracción de un objeto; expediente ""${i}"""`, i % 3 === 0 ? `"[{""nombre"":""Testigo ${i}"",""dni"":""12345678Z"",""declaracion"":""Vio los hechos""}]"` : '', i % 2 === 0 ? agente : '', 'alta'].join(';'))
  }
  const csv = lines.join('\r\n') + '\r\n'
  const send = async (query: string): Promise<{ status: number, body: any, seconds: number }> => {
    const t0 = performance.now()
    const res = await fetch(`${base}/denuncias/importar${query}`, { method: 'POST', headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` }, body: csv })
    const body = await res.json() as unknown
    return { status: res.status, body, seconds: (performance.now() - t0) / 1000 }
  }
  const mode = `${process.env.DATABASE_URL !== undefined ? 'PostgreSQL' : 'embedded'}${process.env.REDIS_URL !== undefined ? ' + Redis' : ''}`
  console.log(`import of ${rows} denuncias (${(Buffer.byteLength(csv) / 1024 / 1024).toFixed(1)} MiB CSV), ${mode}`)
  const dry = await send('?simular=true')
  if (dry.status !== 200 || dry.body.data.validas !== rows) throw new Error(`simular: ${dry.status} ${JSON.stringify(dry.body).slice(0, 500)}`)
  console.log(`  simular=true (validate and check every row, write nothing): ${dry.seconds.toFixed(2)} s`)
  const real = await send('')
  if (real.status !== 201 || real.body.data.creados !== rows) throw new Error(`import: ${real.status} ${JSON.stringify(real.body).slice(0, 500)}`)
  console.log(`  import (one transaction, ${rows} records with history and seal): ${real.seconds.toFixed(2)} s — ${Math.round(rows / real.seconds)} rows/s (target: under 20 s)`)
  const ids = real.body.data.ids as string[]
  for (const id of [ids[0]!, ids[Math.floor(ids.length / 2)]!, ids.at(-1)!]) {
    const verdict = await json('GET', `/denuncias/${id}/verificar`, undefined, token)
    if (verdict.data.valido !== true) throw new Error(`${id} does not verify`)
  }
  console.log('  seals of the first, middle and last record verify')

  const hostile = `a,b,c,d,e\n${',,,,\n'.repeat(2_000_000)}`
  const refused = await underWatch(`2,000,000 rows of ,,,, (${(hostile.length / 1024 / 1024).toFixed(1)} MiB, simular=true)`, async () => {
    const res = await fetch(`${base}/denuncias/importar?simular=true`, { method: 'POST', headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` }, body: hostile })
    return { status: res.status, body: await res.json() as any }
  })
  if (refused.status !== 413) throw new Error(`2,000,000 rows: ${refused.status} ${JSON.stringify(refused.body).slice(0, 300)}`)
  console.log(`    answered ${refused.status} ${refused.body.error as string}`)

  const big = ['denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion']
  for (let i = 1; i <= largeRows; i++) big.push(`Denunciante ${i};${tipos[i % 5]!};2026-0${1 + i % 9}-1${i % 10} 10:00:00;Calle Mayor ${i};Sustracción de un objeto, expediente ${i}`)
  const bigCsv = big.join('\r\n') + '\r\n'
  const large = await underWatch(`import of ${largeRows} rows (${(Buffer.byteLength(bigCsv) / 1024 / 1024).toFixed(1)} MiB)`, async () => {
    const res = await fetch(`${base}/denuncias/importar`, { method: 'POST', headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` }, body: bigCsv })
    return { status: res.status, body: await res.json() as any }
  })
  if (large.status !== 201 || large.body.data.creados !== largeRows) throw new Error(`large import: ${large.status} ${JSON.stringify(large.body).slice(0, 300)}`)
  console.log(`    answered ${large.status}, ${large.body.data.creados as number} created`)
} finally {
  await server.stop()
}
