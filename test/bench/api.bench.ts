/**
 * `npm run bench`: throughput and latency of the hot paths on a real
 * listening server — embedded by default, or PostgreSQL and Redis when
 * DATABASE_URL / REDIS_URL are set (use a throw-away database: the bench
 * writes records). Loopback only; bounded in time. Not part of `npm test`.
 *
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=20 BENCH_WARMUP=3 [BENCH_ONLY=regex] npm run bench
 */
import autocannon from 'autocannon'
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'
import { documentCost, documentLine } from './document-cost.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20)
const warmup = Number(process.env.BENCH_WARMUP ?? 3)
/** BENCH_ONLY=regex runs only the cases whose name matches. */
const only = process.env.BENCH_ONLY === undefined ? undefined : new RegExp(process.env.BENCH_ONLY)
const server = await startBenchServer()
const { app, base, json } = server

const token = (await json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
const plain = (await json('POST', '/sala092', { tipo_incidencia: 'normal', descripcion: 'Ruido en la vía pública' }, token)).data._id as string
for (let i = 0; i < 200; i++) await json('POST', '/sala092', { tipo_incidencia: 'urgente', descripcion: `Llamada ${i}` }, token)
const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
// A caller limited to own records (agente: sala092.ver:propios): the scope rides in the same query.
await json('POST', '/usuarios', { username: 'bench-agente', password: 'bench-password-123', nombre: 'Agente', rol: 'agente' }, token)
const agente = (await json('POST', '/auth/login', { username: 'bench-agente', password: 'bench-password-123' })).data.token as string
const own = (await json('POST', '/sala092', { tipo_incidencia: 'urgente', descripcion: 'Llamada propia' }, agente)).data._id as string
for (let i = 0; i < 20; i++) await json('POST', '/sala092', { tipo_incidencia: 'urgente', descripcion: `Propia ${i}` }, agente)
const agenteAuth = { authorization: `Bearer ${agente}`, 'content-type': 'application/json' }

const cases: Array<{ name: string, opts: autocannon.Options }> = [
  { name: 'GET /sala092/{id} (hot path)', opts: { url: `${base}/sala092/${plain}`, headers: auth } },
  { name: 'GET /sala092?tipo_incidencia=urgente&limit=20', opts: { url: `${base}/sala092?tipo_incidencia=urgente&limit=20`, headers: auth } },
  { name: 'POST /sala092 (create: id, hash, history)', opts: { url: `${base}/sala092`, method: 'POST', headers: auth, body: JSON.stringify({ tipo_incidencia: 'normal', descripcion: 'Alta de prueba' }) } },
  { name: 'GET /sala092/{id} as agente (own-only scope)', opts: { url: `${base}/sala092/${own}`, headers: agenteAuth } },
  { name: 'GET /sala092?tipo_incidencia=urgente&limit=20 as agente', opts: { url: `${base}/sala092?tipo_incidencia=urgente&limit=20`, headers: agenteAuth } },
]
const rows: string[] = []
/** Median time of failed logins (sequential, under the lock-out limit per username). */
async function failedLoginMedian (usernames: string[]): Promise<number> {
  const times: number[] = []
  for (const username of usernames) {
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now()
      await json('POST', '/auth/login', { username, password: 'not-the-password-1' })
      times.push(performance.now() - t0)
    }
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!
}
let loginLine = ''
try {
  for (const c of cases) {
    if (only !== undefined && !only.test(c.name)) continue
    // Warm up first (JIT, connection pool, caches), so the order of the cases does not decide their figures.
    await autocannon({ ...c.opts, connections, duration: warmup })
    const r = await autocannon({ ...c.opts, connections, duration: seconds })
    rows.push(`| ${c.name} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} |`)
  }
  const known: string[] = []
  for (let i = 0; i < 4; i++) {
    const username = `bench-known-${i}`
    await json('POST', '/usuarios', { username, password: 'bench-password-123', nombre: 'Bench', rol: 'consulta' }, token)
    known.push(username)
  }
  const knownMs = await failedLoginMedian(known)
  const unknownMs = await failedLoginMedian(known.map((u) => `${u}-nadie`))
  loginLine = `\nFailed login, median of 20: known username ${knownMs.toFixed(1)} ms, unknown username ${unknownMs.toFixed(1)} ms\n`
  loginLine += documentLine(await documentCost(server, token))
} finally {
  await server.stop()
}
process.stdout.write(`\n${app.databaseKind} database, ${app.stores.kind} stores, ${connections} connections, ${seconds} s each\n\n`)
process.stdout.write('| case | req/s | p50 ms | p99 ms | non-2xx |\n|---|---|---|---|---|\n' + rows.join('\n') + '\n' + loginLine)
