/**
 * The service side of `npm run bench:export` (test/bench/export.bench.ts),
 * a child process of its own so that what it measures is the service
 * alone: the client's fetch buffers and garbage live in the parent
 * (docs/performance.md "Export of a million rows (issue 23)").
 *
 * Over IPC: `ready` (base, token, live rows) once the table is filled;
 * `start` resets the kernel's peak RSS (/proc/self/clear_refs, 5) after a
 * full collection and samples the heap; `stop` answers the peak RSS
 * (VmHWM: every page the process touched, not a sample) and heap above
 * the start; `exit` stops the server. With BENCH_LIVE=1 (the parent then
 * passes --expose-gc) a full collection runs every 100 ms and the heap
 * after it is the live set: what the export holds, without the garbage.
 * With BENCH_PROMOTED=<file>, a sampling heap profile (.heapprofile, for
 * Chrome's DevTools) of the export's allocations that outlived the young
 * generation: what fills the old one.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { fillDenuncias, startTableBench } from './bench-app.js'

export type BenchMessage =
  | { type: 'ready', kind: string, base: string, token: string, rows: number, live: number, loadSeconds: number }
  | { type: 'started' }
  | { type: 'stopped', rssBefore: number, rssPeak: number, heapBefore: number, heapPeak: number, livePeak?: number }

const send = (m: BenchMessage): void => { process.send!(m) }

/** The process's peak resident set since start or the last reset, in bytes. */
const vmHwm = (): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024

const bench = await startTableBench()
const { server } = bench
const loadSeconds = await fillDenuncias(bench, (from, to) => `
  insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash",
                         denunciante_nombre, denunciante_email, tipo, fecha_hechos, lugar_hechos, descripcion, testigos, estado, prioridad)
  select 'DEN-1990-' || lpad(i::text, 7, '0'), now() - i * interval '1 second', 'USR-1990-00001', now(), 'USR-1990-00001', 1, repeat('0', 64),
         (array['Ana', 'Luis', 'María', 'José'])[1 + i % 4] || ', ' || (array['García', 'Pérez', 'López'])[1 + i % 3] || ' ' || i,
         case when i % 10 = 0 then 'v' || i || '@example.org' end,
         (array['hurto', 'robo', 'daños', 'lesiones', 'estafa'])[1 + i % 5], now() - i * interval '1 minute',
         'Calle ' || (array['Mayor', 'Real', 'Ancha'])[1 + i % 3] || ' ' || (i % 300),
         'Sustracción de un objeto en la vía pública; el denunciante declara que ocurrió por la mañana. Expediente ' || i,
         case when i % 100 = 0 then '["Testigo", "Otro"]'::jsonb end,
         'pendiente', (array['baja', 'media', 'alta', 'urgente'])[1 + i % 4]
  from generate_series(${from}, ${to}) as i`)
// What the export holds: the rows a list shows (the table may hold soft-deleted ones).
const live = ((await server.json('GET', '/denuncias?limit=1', undefined, bench.token)) as { data: { total: number } }).data.total
send({ type: 'ready', kind: server.app.databaseKind, base: server.base, token: bench.token, rows: bench.rows, live, loadSeconds })

let sampler: NodeJS.Timeout | undefined
let profiler: Session | undefined
const promotedProfile = process.env.BENCH_PROMOTED
let m = { rssBefore: 0, heapBefore: 0, heapPeak: 0, livePeak: 0 }
const collect = globalThis.gc
const liveSet = process.env.BENCH_LIVE === '1' && collect !== undefined

process.on('message', async (msg: { type: 'start' | 'stop' | 'exit' }) => {
  if (msg.type === 'start') {
    collect?.()
    writeFileSync('/proc/self/clear_refs', '5')
    const heap = process.memoryUsage().heapUsed
    m = { rssBefore: process.memoryUsage.rss(), heapBefore: heap, heapPeak: heap, livePeak: heap }
    if (promotedProfile !== undefined) {
      profiler = new Session()
      profiler.connect()
      // Every sampled allocation but those a scavenge freed: what reached the old generation.
      void profiler.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true } as never)
    }
    sampler = setInterval(() => {
      m.heapPeak = Math.max(m.heapPeak, process.memoryUsage().heapUsed)
      if (liveSet) {
        collect!()
        m.livePeak = Math.max(m.livePeak, process.memoryUsage().heapUsed)
      }
    }, liveSet ? 100 : 20)
    send({ type: 'started' })
  } else if (msg.type === 'stop') {
    clearInterval(sampler)
    if (profiler !== undefined) writeFileSync(promotedProfile!, JSON.stringify((await profiler.post('HeapProfiler.stopSampling')).profile))
    m.heapPeak = Math.max(m.heapPeak, process.memoryUsage().heapUsed)
    send({ type: 'stopped', rssBefore: m.rssBefore, rssPeak: vmHwm(), heapBefore: m.heapBefore, heapPeak: m.heapPeak, ...(liveSet && { livePeak: m.livePeak }) })
  } else {
    void server.stop().finally(() => process.exit(0))
  }
})
