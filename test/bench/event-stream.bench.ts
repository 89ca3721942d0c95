/**
 * `npm run bench:eventos`: BENCH_STREAMS (default 500) live streams open on
 * a real listening server (docs/user-guide.md "Events: the live stream
 * (eventos)"; SPEC S18 "Cost": p99 under 250 ms from commit to a stream
 * with 500 open streams), then BENCH_EVENTS (default 200) sala092 calls
 * created one at a time, BENCH_GAP_MS (default 50) apart. Each call's
 * latency is measured from the moment its POST is sent (an upper bound
 * of "from commit") to its arrival on each stream; the percentiles are
 * over every (call, stream) pair. The streams are a `consulta` user's
 * (no decryption, hence no read log), the clients run in this process
 * beside the server, so the figures are pessimistic. Embedded by
 * default, PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set.
 * Not part of `npm test`.
 *
 *   [BENCH_STREAMS=500] [BENCH_EVENTS=200] DATABASE_URL=postgres://…/bench REDIS_URL=redis://… npm run bench:eventos
 */
import { openStream, type Sse } from '../helpers/sse.js'
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'

const streams = Number(process.env.BENCH_STREAMS ?? 500)
const events = Number(process.env.BENCH_EVENTS ?? 200)
const gapMs = Number(process.env.BENCH_GAP_MS ?? 50)
// One user holds every stream: the per-user limit is not what is measured.
process.env.EVENT_STREAMS_PER_USER = String(streams)
const server = await startBenchServer()
const { base, json } = server

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]!

try {
  const admin = (await json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
  const user = { username: `bench-eventos-${Date.now()}`, password: 'bench-password-123' }
  await json('POST', '/usuarios', { ...user, nombre: 'Sala 092', rol: 'consulta' }, admin)
  const token = (await json('POST', '/auth/login', user)).data.token as string
  const open: Sse[] = []
  for (let i = 0; i < streams; i++) open.push(await openStream(base, '/eventos?modulos=sala092', token))
  if (open.some((s) => s.status !== 200)) throw new Error(`a stream was refused: ${JSON.stringify(open.find((s) => s.status !== 200)!.body)}`)
  // Every stream subscribed before the first write.
  while (server.app.eventStreams.size < streams || server.app.feed.size < streams) await new Promise((r) => setTimeout(r, 50))
  const mode = `${process.env.DATABASE_URL !== undefined ? 'PostgreSQL' : 'embedded'}${process.env.REDIS_URL !== undefined ? ' + Redis' : ''}`
  console.log(`${streams} streams, ${events} sala092 calls ${gapMs} ms apart, ${mode}`)

  // Calls are created one at a time and every stream gets them in feed order: the n-th message is the n-th call.
  const sent: number[] = []
  const latencies: number[] = []
  const arrived = new Map<Sse, number>()
  // Each stream's arrivals, timed as they come.
  const watch = open.map(async (s) => {
    for (let n = 0; n < events; n++) {
      await s.next(() => true, 60_000)
      latencies.push(performance.now() - sent[n]!)
      arrived.set(s, n + 1)
    }
  })
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < events; i++) {
    sent.push(performance.now())
    const res = await fetch(`${base}/sala092`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ tipo_incidencia: 'urgente', descripcion: `Llamada ${i}`, numero_llamada: '600111222' }) })
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`)
    await res.arrayBuffer()
    await new Promise((r) => setTimeout(r, gapMs))
  }
  await Promise.all(watch)
  const cpu = process.cpuUsage(cpu0)
  latencies.sort((a, b) => a - b)
  const ms = (v: number): string => `${v.toFixed(1)} ms`
  console.log(`deliveries ${latencies.length} (every stream got every call: ${[...arrived.values()].every((n) => n === events)})`)
  console.log(`latency from POST sent: p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies.at(-1)!)}`)
  console.log(`process CPU (server and clients): ${((cpu.user + cpu.system) / 1000 / events).toFixed(1)} ms per call`)
  for (const s of open) s.close()
} finally {
  await server.stop()
}
