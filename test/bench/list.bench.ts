/**
 * `npm run bench:list`: filtered lists (docs/performance.md "Lists over a million rows", issue 10) over a large
 * `sala092` table, through the full HTTP stack of a real listening server:
 * a page of 20 in the default order and its exact total, for a selective
 * filter (0.1 % of the rows), a broad one (a third), the two combined and
 * no filter. Every 7th row is soft-deleted. Embedded by default,
 * PostgreSQL when DATABASE_URL is set (use a throw-away database: the bench
 * inserts BENCH_ROWS rows). Not part of `npm test`.
 *
 *   BENCH_ROWS=1000000 [BENCH_RUNS=30] DATABASE_URL=postgres://…/bench npm run bench:list
 */
import { startTableBench, timeList } from './bench-app.js'

const { rows, runs, server, sql, token } = await startTableBench()
const { app, base } = server

try {
  const t0 = performance.now()
  for (let from = 1; from <= rows; from += 100_000) {
    const to = Math.min(rows, from + 99_999)
    await sql(`
      insert into sala092 ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", "_deleted",
                           tipo_incidencia, descripcion, categoria, ubicacion, operador, estado)
      select '092-1990-' || lpad(i::text, 7, '0'), now() - i * interval '1 second', 'USR-1990-00001', now(), 'USR-1990-00001', 1, repeat('0', 64),
             case when i % 7 = 0 then now() end,
             (array['urgente', 'normal', 'informacion'])[1 + i % 3], 'Llamada número ' || i || ' recibida en sala',
             (array['trafico', 'seguridad_ciudadana', 'ruidos', 'otros'])[1 + i % 4],
             'Calle ' || (i % 1000), 'Operador ' || (i % 40), (array['pendiente', 'en_curso', 'resuelta'])[1 + (i / 3) % 3]
      from generate_series(${from}, ${to}) as i`)
  }
  await sql('vacuum analyze sala092')
  const loadSeconds = (performance.now() - t0) / 1000
  const cases = [
    'ubicacion=Calle%20123',
    'operador=Operador%207&ubicacion=Calle%20123',
    'estado=en_curso',
    'estado=en_curso&categoria=ruidos',
    '',
  ]
  const lines: string[] = []
  for (const c of cases) {
    const t = await timeList(`${base}/sala092?${c}${c === '' ? '' : '&'}limit=20`, token, runs)
    lines.push(`| \`${decodeURIComponent(c) || '(none)'}\` | ${t.total.toLocaleString('en')} (${(100 * t.total / rows).toFixed(1)} %) | ${t.median.toFixed(1)} | ${t.p95.toFixed(1)} |`)
  }
  console.log(`\n${app.databaseKind}, ${rows.toLocaleString('en')} sala092 rows, 1 in 7 deleted (loaded and indexed in ${loadSeconds.toFixed(0)} s), ${runs} sequential requests each, a page of 20 and its exact total:\n`)
  console.log('| filter | total (live) | median ms | p95 ms |\n|---|---|---|---|')
  console.log(lines.join('\n'))
} finally {
  await server.stop()
}
