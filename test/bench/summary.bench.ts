/**
 * `npm run bench:resumen`: summaries (docs/user-guide.md "Summaries
 * (resumen)", docs/performance.md "Summaries over a million rows") over a
 * large `denuncias` table, through the full HTTP stack of a real listening
 * server: counts by one key, by a date bucket, by two keys, with a filter
 * and with measures, each with the plan PostgreSQL ran (EXPLAIN ANALYZE of
 * the statement the service sent). 1 row in 20 is soft-deleted. Embedded
 * by default, PostgreSQL when DATABASE_URL is set (use a throw-away
 * database: the bench inserts BENCH_ROWS rows unless the table holds them
 * from an earlier run). Not part of `npm test`.
 *
 *   BENCH_ROWS=1000000 [BENCH_RUNS=30] DATABASE_URL=postgres://…/bench npm run bench:resumen
 */
import { fillDenuncias, median, p95, startTableBench } from './bench-app.js'
import { queriesOf } from '../helpers/sql-capture.js'

const bench = await startTableBench()
const { rows, runs, server, sql, token } = bench
const { app, base } = server

/** The plan's nodes, as `Index Only Scan on <index>`, outermost first. */
async function planOf (query: string): Promise<string> {
  const sent = await queriesOf(app.orm.em, async () => app.inject({ method: 'GET', url: `/denuncias/resumen?${query}`, headers: { authorization: `Bearer ${token}` } }))
  const q = sent.find((s) => s.sql.includes('count(*) over ()'))
  if (q === undefined) return '(not captured)'
  // The values inlined as literals: the plan of the statement as one request runs it.
  const literal = (v: unknown): string => typeof v === 'number' ? String(v) : `'${String(v instanceof Date ? v.toISOString() : v).replace(/'/g, "''")}'`
  const text = q.sql.replace(/\$(\d+)/g, (_, i: string) => literal(q.bindings[Number(i) - 1]))
  const explained = await sql<any>(`explain (analyze, format json) ${text}`)
  const plan = explained[0]['QUERY PLAN'][0].Plan
  const nodes: string[] = []
  const walk = (n: Record<string, any>): void => {
    nodes.push(`${n['Node Type']}${n['Index Name'] !== undefined ? ` on ${n['Index Name']}` : n['Relation Name'] !== undefined ? ` on ${n['Relation Name']}` : ''}`)
    for (const c of n.Plans ?? []) walk(c)
  }
  walk(plan)
  return nodes.join(' → ')
}

async function timeSummary (query: string): Promise<{ groups: number, total: number, median: number, p95: number }> {
  const url = `${base}/denuncias/resumen?${query}`
  const headers = { authorization: `Bearer ${token}` }
  let data: any
  for (let i = 0; i < 3; i++) data = ((await (await fetch(url, { headers })).json()) as any).data
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const s = performance.now()
    await (await fetch(url, { headers })).json()
    times.push(performance.now() - s)
  }
  return { groups: data.total_grupos, total: data.total, median: median(times), p95: p95(times) }
}

try {
  // Two years of complaints, one every minute; 5 kinds, 4 states, 4 priorities.
  const loadSeconds = await fillDenuncias(bench, (from, to) => `
    insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", "_deleted",
                           denunciante_nombre, tipo, fecha_hechos, lugar_hechos, descripcion, estado, prioridad)
    select 'DEN-1990-' || lpad(i::text, 7, '0'), now() - i * interval '1 minute', 'USR-1990-00001', now(), 'USR-1990-00001', 1, repeat('0', 64),
           case when i % 20 = 0 then now() end,
           'Denunciante ' || i, (array['hurto', 'robo', 'daños', 'lesiones', 'estafa'])[1 + i % 5],
           timestamptz '2026-06-01 00:00:00Z' - i * interval '1 minute' - (i % 17) * interval '1 second',
           'Calle ' || (i % 300), 'Hechos del expediente ' || i,
           (array['pendiente', 'investigacion', 'archivada', 'judicializada'])[1 + (i / 5) % 4],
           (array['baja', 'media', 'alta', 'urgente'])[1 + (i / 3) % 4]
    from generate_series(${from}, ${to}) as i`)
  const cases = [
    'agrupar=estado',
    'agrupar=tipo',
    'agrupar=prioridad',
    'agrupar=estado&tipo=robo',
    'agrupar=fecha_hechos:mes',
    'agrupar=fecha_hechos:semana&fecha_hechos[gte]=2026-01-01%2000:00:00',
    'agrupar=tipo,estado',
    'agrupar=tipo&medidas=min:fecha_hechos,max:fecha_hechos',
  ]
  const lines: string[] = []
  const plans: string[] = []
  for (const c of cases) {
    const t = await timeSummary(c)
    lines.push(`| \`${decodeURIComponent(c)}\` | ${t.groups} | ${t.total.toLocaleString('en')} | ${t.median.toFixed(1)} | ${t.p95.toFixed(1)} |`)
    if (app.databaseKind !== 'embedded') plans.push(`- \`${decodeURIComponent(c)}\`: ${await planOf(c)}`)
  }
  console.log(`\n${app.databaseKind}, ${rows.toLocaleString('en')} denuncias rows, 1 in 20 deleted (${loadSeconds > 0 ? `loaded, indexed and vacuumed in ${loadSeconds.toFixed(0)} s` : 'loaded by an earlier run'}), ${runs} sequential requests each:\n`)
  console.log('| summary | groups | total (live) | median ms | p95 ms |\n|---|---|---|---|---|')
  console.log(lines.join('\n'))
  if (plans.length > 0) console.log(`\nPlans:\n${plans.join('\n')}\n`)
} finally {
  await server.stop()
}
