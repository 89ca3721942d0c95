/**
 * GET /metrics (docs/operator-guide.md "Metrics"): Prometheus text on the METRICS_PORT listener,
 * scraped here over real HTTP; request counts and latencies by route
 * pattern and status, 429 refusals, the database pool, Redis, the process.
 * The public port answers /metrics like any unknown route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { errorOf } from '../helpers/errors.js'
import { freePort } from '../helpers/free-port.js'
import { client, login } from '../helpers/http.js'
import { usingRedis } from '../helpers/services.js'

let h: Harness
let app: FastifyInstance
let port: number

beforeAll(async () => {
  h = await createHarness()
  port = await freePort()
  app = await h.app({ env: { METRICS_PORT: String(port), RATE_LIMIT_IP_MAX: '40' } })
})
afterAll(async () => { await h.close() })

const scrape = async (): Promise<string> => {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return res.text()
}
/** The value of one sample line, by metric name and exact label set as Prometheus prints it. */
const sample = (text: string, name: string, labels: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

describe('GET /metrics on METRICS_PORT', () => {
  it('counts requests and their latency by route pattern and status, never by raw URL', async () => {
    const token = await login(app)
    const api = client(app, token)
    const created = await api.post('/sala092', { tipo_incidencia: 'urgente', descripcion: 'Aviso para las métricas' })
    expect(created.status).toBe(201)
    const id = created.body.data._id as string
    for (let i = 0; i < 3; i++) expect((await api.get(`/sala092/${id}`)).status).toBe(200)
    expect((await api.get('/sala092/092-2026-99999')).status).toBe(404)
    expect((await client(app).get('/sala092')).status).toBe(401)
    expect((await api.get('/no-existe/abc')).status).toBe(404)

    const text = await scrape()
    const get = 'method="GET",route="/sala092/:id"'
    expect(sample(text, 'http_request_duration_seconds_count', `${get},status_code="200"`)).toBe(3)
    expect(sample(text, 'http_request_duration_seconds_count', `${get},status_code="404"`)).toBe(1)
    expect(sample(text, 'http_request_duration_seconds_count', 'method="POST",route="/sala092",status_code="201"')).toBe(1)
    expect(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="/sala092",status_code="401"')).toBe(1)
    expect(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="(ninguna)",status_code="404"')).toBe(1)
    // Latency: a sum above zero, and the +Inf bucket holds every request.
    expect(sample(text, 'http_request_duration_seconds_sum', `${get},status_code="200"`)).toBeGreaterThan(0)
    expect(sample(text, 'http_request_duration_seconds_bucket', `le="+Inf",${get},status_code="200"`)).toBe(3)
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.1",method="GET",route="\/sala092\/:id",status_code="200"\} \d/)
    // No series carries a raw id.
    expect(text).not.toContain(id)
  })

  it('is not on the public port, and the metrics listener serves nothing else', async () => {
    // Like any unknown address: the token first (the order of docs/user-guide.md "Errors"), then 404.
    expect((await client(app).get('/metrics')).body).toEqual(errorOf('TOKEN_NO_PROPORCIONADO'))
    const res = await client(app, await login(app)).get('/metrics')
    expect(res.status).toBe(404)
    expect(res.body).toEqual(errorOf('RUTA_NO_ENCONTRADA')) // a reserved path (core/registry/build.ts)
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(404)
  })

  it('counts rate-limit refusals, and shows the pool, Redis and process figures', async () => {
    let refused = 0
    for (let i = 0; i < 45; i++) if ((await client(app).get('/sala092')).status === 429) refused++
    expect(refused).toBeGreaterThan(0)
    const text = await scrape()
    expect(sample(text, 'http_rate_limit_refusals_total', 'route="/sala092"')).toBe(refused)
    expect(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="/sala092",status_code="429"')).toBe(refused)
    expect(sample(text, 'db_pool_connections', 'state="used"')).toBeGreaterThanOrEqual(0)
    expect(sample(text, 'db_pool_connections', 'state="free"')).toBeGreaterThanOrEqual(0)
    expect(sample(text, 'db_pool_connections', 'state="pending"')).toBe(0)
    if (usingRedis) for (const line of ['redis_up 1', 'redis_reconnects_total 0', 'redis_primary_changes_total 0']) expect(text).toMatch(new RegExp(`^${line}$`, 'm'))
    else expect(text).not.toContain('redis_')
    expect(text).toMatch(/^process_cpu_seconds_total \d/m)
    expect(text).toMatch(/^process_resident_memory_bytes \d/m)
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m)
  })

  it('METRICS_PORT=0 opens no listener; a port in use refuses to start with the fix', async () => {
    const off = await h.app()
    expect(off.metricsServer).toBeUndefined()
    await expect(h.app({ env: { METRICS_PORT: String(port) } })).rejects.toThrow(new RegExp(`^METRICS_PORT ${port} on 127.0.0.1 cannot be used \\(EADDRINUSE\\); set METRICS_PORT to a free port, or to 0`))
  })
})
