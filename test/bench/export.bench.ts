/**
 * `npm run bench:export`: an export (docs/user-guide.md "Export (exportar)")
 * of a large `denuncias` table as CSV through the full HTTP stack of a real
 * listening server, run in a child process (test/bench/export-bench-server.ts)
 * and read by a client here that drops what it reads: rows per second, and
 * the service process's peak resident memory above what it held before the
 * export (SPEC S17: a million rows grow it by under 64 MB). The client is
 * kept out of the measured process: its buffers are not the service's
 * (docs/performance.md "Export of a million rows (issue 23)"). Embedded by
 * default, PostgreSQL when DATABASE_URL is set (use a throw-away database:
 * the bench inserts BENCH_ROWS rows unless the table holds them already).
 * BENCH_FORMAT=ndjson exports NDJSON; BENCH_LIVE=1 also reports the live
 * heap (a full collection every 100 ms: slower); BENCH_PROMOTED=<file>
 * profiles what reached the old generation (test/bench/export-bench-server.ts);
 * BENCH_NODE_FLAGS, node flags for the service's process only (--trace-gc,
 * --max-old-space-size=…). Not part of `npm test`.
 *
 *   BENCH_ROWS=1000000 DATABASE_URL=postgres://…/bench npm run bench:export
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { BenchMessage } from './export-bench-server.js'

const live = process.env.BENCH_LIVE === '1'
const format = process.env.BENCH_FORMAT ?? 'csv'
const child = fork(fileURLToPath(new URL('./export-bench-server.ts', import.meta.url)), {
  execArgv: ['--import', 'tsx', '--expose-gc', ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '')],
})
const exited = once(child, 'exit')
child.on('exit', (code) => { if (code !== 0) console.error(`the bench server exited with ${String(code)}`) })

/** The child's next message of this type. */
async function next<T extends BenchMessage['type']> (type: T): Promise<Extract<BenchMessage, { type: T }>> {
  for (;;) {
    const [m] = await Promise.race([once(child, 'message'), exited.then(() => { throw new Error('the bench server exited') })]) as [BenchMessage]
    if (m.type === type) return m as Extract<BenchMessage, { type: T }>
  }
}

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1)

try {
  const ready = await next('ready')
  child.send({ type: 'start' })
  await next('started')
  const start = performance.now()
  const res = await fetch(`${ready.base}/denuncias/exportar?formato=${format}`, { headers: { authorization: `Bearer ${ready.token}` } })
  if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`)
  let lines = 0
  let bytes = 0
  // The seeded values hold no line break: every LF ends a record (a CSV's first, the header).
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++
  }
  const seconds = (performance.now() - start) / 1000
  child.send({ type: 'stop' })
  const m = await next('stopped')
  const exported = format === 'csv' ? lines - 1 : lines
  const growth = (m.rssPeak - m.rssBefore) / 2 ** 20
  console.log(`\n${ready.kind}, ${ready.rows.toLocaleString('en')} denuncias, ${ready.live.toLocaleString('en')} not deleted (loaded in ${ready.loadSeconds.toFixed(0)} s), one ${format.toUpperCase()} export through HTTP, the service in its own process:\n`)
  console.log(`| rows exported | MB sent | seconds | rows/s | RSS before (MB) | peak RSS growth (MB) | peak heap growth (MB) |${live ? ' peak live heap growth (MB) |' : ''}\n|---|---|---|---|---|---|---|${live ? '---|' : ''}`)
  console.log(`| ${exported.toLocaleString('en')} | ${(bytes / 2 ** 20).toFixed(0)} | ${seconds.toFixed(1)} | ${Math.round(exported / seconds).toLocaleString('en')} | ${(m.rssBefore / 2 ** 20).toFixed(0)} | ${growth.toFixed(1)} | ${mb(m.heapPeak - m.heapBefore)} |${m.livePeak !== undefined ? ` ${mb(m.livePeak - m.heapBefore)} |` : ''}`)
  if (exported !== ready.live) throw new Error(`exported ${exported} of ${ready.live} rows`)
  if (growth >= 64) throw new Error(`peak RSS grew by ${growth.toFixed(1)} MB (limit 64 MB)`)
} finally {
  if (child.connected) child.send({ type: 'exit' })
  await exited
}
