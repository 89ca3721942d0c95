/**
 * `npm run bench:export`: an export (docs/user-guide.md "Export (exportar)")
 * of a large `denuncias` table as CSV through the full HTTP stack of a real
 * listening server, read by a client in the same process that drops what it
 * reads: rows per second, and the process's peak resident memory above
 * what it held before the export (SPEC S17: a million rows grow it by
 * under 64 MB). Embedded by default, PostgreSQL when DATABASE_URL is set
 * (use a throw-away database: the bench inserts BENCH_ROWS rows unless the
 * table holds them already). Not part of `npm test`.
 *
 *   BENCH_ROWS=1000000 DATABASE_URL=postgres://…/bench npm run bench:export
 */
import { fillDenuncias, startTableBench } from './bench-app.js'

const bench = await startTableBench()
const { rows, server, token } = bench
const { app, base } = server

try {
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

  global.gc?.()
  const before = process.memoryUsage.rss()
  const heapBefore = process.memoryUsage().heapUsed
  let peak = before
  let heapPeak = heapBefore
  // The heap's high-water mark too: RSS keeps pages the collector freed, the heap says what was live or not yet collected.
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
  }, 20)
  const start = performance.now()
  const res = await fetch(`${base}/denuncias/exportar?formato=csv`, { headers: { authorization: `Bearer ${token}` } })
  if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`)
  let lines = 0
  let bytes = 0
  // The seeded values hold no line break: every CRLF ends a record (the first, the header).
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++
    peak = Math.max(peak, process.memoryUsage.rss())
  }
  const seconds = (performance.now() - start) / 1000
  clearInterval(sample)
  const exported = lines - 1
  const growth = (peak - before) / 2 ** 20
  console.log(`\n${app.databaseKind}, ${rows.toLocaleString('en')} denuncias (loaded in ${loadSeconds.toFixed(0)} s), one CSV export through HTTP:\n`)
  console.log('| rows exported | MB sent | seconds | rows/s | RSS before (MB) | peak RSS growth (MB) | peak heap growth (MB) |\n|---|---|---|---|---|---|---|')
  console.log(`| ${exported.toLocaleString('en')} | ${(bytes / 2 ** 20).toFixed(0)} | ${seconds.toFixed(1)} | ${Math.round(exported / seconds).toLocaleString('en')} | ${(before / 2 ** 20).toFixed(0)} | ${growth.toFixed(1)} | ${((heapPeak - heapBefore) / 2 ** 20).toFixed(1)} |`)
  if (exported < rows) throw new Error(`exported ${exported} of ${rows} rows`)
  if (growth >= 64) throw new Error(`peak RSS grew by ${growth.toFixed(1)} MB (limit 64 MB)`)
} finally {
  await server.stop()
}
