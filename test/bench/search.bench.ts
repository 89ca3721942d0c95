/**
 * `npm run bench:search`: search (docs/user-guide.md "Search") over a large `denuncias` table,
 * through the full HTTP stack of a real listening server: the time of a
 * selective search with its exact total (whole words and prefixes), the
 * stored search document's size, then what the search indexes cost a
 * create. Embedded by default, PostgreSQL when DATABASE_URL is set (use a
 * throw-away database: the bench inserts BENCH_ROWS rows, unless the table
 * already holds them from an earlier run, and drops the search indexes at
 * the end, with the stored search document; the next start builds them
 * again: over a million rows run `npm run migrate` first, which has no
 * start-up time limit). Not part of `npm test`.
 *
 *   BENCH_ROWS=1000000 [BENCH_RUNS=30] [BENCH_CREATES=200, 0: none] DATABASE_URL=postgres://…/bench npm run bench:search
 */
import { median, startTableBench, timeList } from './bench-app.js'

const creates = Number(process.env.BENCH_CREATES ?? 200)
const { rows, runs, server, sql, token } = await startTableBench()
const { app, base, json } = server

try {
  const t0 = performance.now()
  const n = (await sql<{ n: string }>('select count(*) as n from denuncias'))[0]!.n
  // Text from a small vocabulary, as complaints read; "bicicleta" is 1 object in 200 (0.5 %).
  for (let from = 1; Number(n) < rows && from <= rows; from += 100_000) {
    const to = Math.min(rows, from + 99_999)
    await sql(`
      insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash",
                             denunciante_nombre, denunciante_email, tipo, fecha_hechos, lugar_hechos, descripcion, observaciones, testigos, estado, prioridad)
      select 'DEN-1990-' || lpad(i::text, 7, '0'), now() - i * interval '1 second', 'USR-1990-00001', now(), 'USR-1990-00001', 1, repeat('0', 64),
             (array['Ana', 'Luis', 'María', 'José', 'Lucía', 'Íñigo', 'Carmen'])[1 + i % 7] || ' ' || (array['García', 'Pérez', 'López', 'Muñoz', 'Sánchez'])[1 + i % 5] || ' ' || i,
             case when i % 1000 = 0 then 'v' || i || '@example.org' end,
             (array['hurto', 'robo', 'daños', 'lesiones', 'estafa'])[1 + i % 5], now(),
             'Calle ' || (array['Mayor', 'Real', 'Ancha', 'Nueva', 'del Sol'])[1 + i % 5] || ' ' || (i % 300),
             (array['Sustracción', 'Robo', 'Pérdida', 'Rotura'])[1 + i % 4] || ' de ' ||
               case when (i * 7) % 200 = 0 then 'una bicicleta' else 'un objeto del tipo ' || ((i * 7) % 200) end ||
               ' en la vía pública; el denunciante declara que ocurrió por la mañana. Expediente ' || i,
             case when i % 1000 = 0 then 'Pendiente de revisar' end,
             case when i % 1000 = 0 then '["Testigo"]'::jsonb end,
             'pendiente', 'media'
      from generate_series(${from}, ${to}) as i`)
  }
  await sql('analyze denuncias')
  const loadSeconds = (performance.now() - t0) / 1000
  const cases = [
    'descripcion[contiene]=bicicleta',
    'denunciante_nombre[contiene]=munoz%20123',
    'lugar_hechos[contiene]=nueva%20299',
    'q=bicicletas',
    'q=robo%20bicicleta',
    'q=bicicleta&prioridad=media&sort=-_created',
    // As people type (prefixes): a rare word's start, a name and the start of a number, a name's start that 1 row in 7 has, one letter.
    'q=bicic',
    'q=mu%C3%B1oz%201234',
    'q=luc',
    'q=l',
    'observaciones[vacio]=false',
    'testigos[vacio]=false',
    'denunciante_email[vacio]=false',
  ]
  const lines: string[] = []
  for (const c of cases) {
    const t = await timeList(`${base}/denuncias?${c}&limit=20`, token, runs)
    lines.push(`| \`${decodeURIComponent(c)}\` | ${t.total} | ${t.median.toFixed(1)} | ${t.p95.toFixed(1)} |`)
  }
  // What search costs a create: sequential POSTs with its indexes and stored document, then without.
  const createMs = async (): Promise<number> => {
    const times: number[] = []
    for (let i = 0; i < creates; i++) {
      const s = performance.now()
      await json('POST', '/denuncias', {
        denunciante_nombre: `Bench ${i}`, tipo: 'hurto', fecha_hechos: '2026-03-15 10:30:00', lugar_hechos: 'Calle Mayor 3',
        descripcion: 'Sustracción de una cartera en la vía pública; el denunciante declara que ocurrió por la mañana.', observaciones: 'Sin testigos',
      }, token)
      times.push(performance.now() - s)
    }
    return median(times)
  }
  // What the stored search document holds per row, and its GIN index.
  const [doc] = await sql<{ name: string }>("select column_name as name from information_schema.columns where table_name = 'denuncias' and column_name like '\\_search\\_%'")
  const [size] = doc === undefined ? [] : await sql<{ bytes: string, index_mb: string }>(
    `select (select avg(pg_column_size("${doc.name}"))::int from denuncias) as bytes, ` +
    "(select pg_relation_size(indexname::regclass) / 1048576 from pg_indexes where tablename = 'denuncias' and indexname like 'denuncias\\_search\\_%' limit 1) as index_mb")
  const sizeLine = size === undefined ? '' : `Stored search document: ${size.bytes} bytes a row on average, its GIN index ${size.index_mb} MB`
  let createLine = ''
  if (creates > 0) {
    const withIndexes = await createMs()
    const searchIdx = await sql<{ indexname: string }>("select indexname from pg_indexes where tablename = 'denuncias' and (indexname like '%\\_trgm\\_idx' or indexname like '%\\_vacio\\_idx' or indexname like 'denuncias\\_search\\_%')")
    for (const { indexname } of searchIdx) await sql(`drop index "${indexname}"`)
    const docColumns = await sql<{ name: string }>("select column_name as name from information_schema.columns where table_name = 'denuncias' and column_name like '\\_search\\_%'")
    for (const { name } of docColumns) await sql(`alter table denuncias drop column "${name}"`)
    const withoutIndexes = await createMs()
    createLine = `POST /denuncias, median of ${creates} sequential: ${withIndexes.toFixed(1)} ms with the ${searchIdx.length} search indexes and the stored search document, ${withoutIndexes.toFixed(1)} ms without them`
  }
  console.log(`\n${app.databaseKind}, ${rows.toLocaleString('en')} denuncias rows (${Number(n) < rows ? `loaded and indexed in ${loadSeconds.toFixed(0)} s` : 'loaded by an earlier run'}), ${runs} sequential requests each, limit=20:\n`)
  console.log('| search | total | median ms | p95 ms |\n|---|---|---|---|')
  console.log(lines.join('\n'))
  if (sizeLine !== '') console.log(`\n${sizeLine}`)
  if (createLine !== '') console.log(`\n${createLine}\n`)
} finally {
  await server.stop()
}
