/**
 * `npm run bench:list`: filtered lists (SPEC S5, issue 10) over a large
 * `sala092` table, through the full HTTP stack of a real listening server:
 * a page of 20 in the default order and its exact total, for a selective
 * filter (0.1 % of the rows), a broad one (a third), the two combined and
 * no filter. Every 7th row is soft-deleted. Embedded by default,
 * PostgreSQL when DATABASE_URL is set (use a throw-away database: the bench
 * inserts BENCH_ROWS rows). Not part of `npm test`.
 *
 *   BENCH_ROWS=1000000 [BENCH_RUNS=30] DATABASE_URL=postgres://…/bench npm run bench:list
 */
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'

const rows = Number(process.env.BENCH_ROWS ?? 1_000_000)
const runs = Number(process.env.BENCH_RUNS ?? 30)
const server = await startBenchServer()
const { app, base, json } = server
const em = app.orm.em.fork()
const sql = async <T = Record<string, unknown>>(text: string): Promise<T[]> => em.getConnection().execute<T[]>(text, [], 'all')

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!

try {
  const token = (await json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
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
  const headers = { authorization: `Bearer ${token}` }
  for (const c of cases) {
    const url = `${base}/sala092?${c}${c === '' ? '' : '&'}limit=20`
    let total = 0
    for (let i = 0; i < 3; i++) total = ((await (await fetch(url, { headers })).json()) as any).data.total // warm-up
    const times: number[] = []
    for (let i = 0; i < runs; i++) {
      const s = performance.now()
      const res = await fetch(url, { headers })
      await res.json()
      times.push(performance.now() - s)
    }
    lines.push(`| \`${decodeURIComponent(c) || '(none)'}\` | ${total.toLocaleString('en')} (${(100 * total / rows).toFixed(1)} %) | ${median(times).toFixed(1)} | ${p95(times).toFixed(1)} |`)
  }
  console.log(`\n${app.databaseKind}, ${rows.toLocaleString('en')} sala092 rows, 1 in 7 deleted (loaded and indexed in ${loadSeconds.toFixed(0)} s), ${runs} sequential requests each, a page of 20 and its exact total:\n`)
  console.log('| filter | total (live) | median ms | p95 ms |\n|---|---|---|---|')
  console.log(lines.join('\n'))
} finally {
  await server.stop()
}
