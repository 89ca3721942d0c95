/**
 * The server every benchmark measures: the real app on a loopback port,
 * embedded by default, PostgreSQL and Redis when DATABASE_URL / REDIS_URL
 * are set; limits raised so the load is not refused; a `bench` superadmin.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { loadConfig } from '../../core/config.js'
import { buildApp } from '../../app.js'
import { flushPrefix } from '../helpers/services.js'
import { listenApp } from '../helpers/free-port.js'

export const BENCH_ADMIN = { username: 'bench', password: 'bench-password-123' }

export interface BenchServer {
  readonly app: FastifyInstance
  /** http://127.0.0.1:<port> */
  readonly base: string
  readonly redisPrefix: string
  /** One JSON request over HTTP; the parsed answer. */
  json (method: string, path: string, body?: unknown, token?: string): Promise<any>
  stop (): Promise<void>
}

/** `redisPrefix`: another instance's, to run beside it; `env`: over process.env. */
export async function startBenchServer (opts: { redisPrefix?: string, env?: Record<string, string> } = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'policia-bench-'))
  const redisPrefix = opts.redisPrefix ?? `bench:${Date.now()}:`
  const config = loadConfig({
    ...process.env,
    ...opts.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ADMIN_USERNAME: BENCH_ADMIN.username,
    ADMIN_PASSWORD: BENCH_ADMIN.password,
    RATE_LIMIT_IP_MAX: '100000000',
    RATE_LIMIT_TOKEN_MAX: '100000000',
    REDIS_PREFIX: redisPrefix,
  })
  const app = await buildApp({ config, logger: { level: 'warn' } })
  const base = await listenApp(app)
  return {
    app,
    base,
    redisPrefix,
    async json (method, path, body, token) {
      const res = await fetch(base + path, {
        method,
        headers: { 'content-type': 'application/json', ...(token !== undefined && { authorization: `Bearer ${token}` }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
      return await res.json()
    },
    async stop () {
      await app.close()
      // Its counters, sessions and sequences leave with it, as a test run's do.
      await flushPrefix(redisPrefix)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** SQL on the bench server's database (loading rows, dropping indexes). */
export async function benchSql<T = Record<string, unknown>> (app: FastifyInstance, text: string): Promise<T[]> {
  return app.orm.em.fork().getConnection().execute<T[]>(text, [], 'all')
}

/** What the table benches (list, search) share: BENCH_ROWS, BENCH_RUNS, the server, SQL on its database and a superadmin token. */
export interface TableBench {
  readonly rows: number
  readonly runs: number
  readonly server: BenchServer
  sql <T = Record<string, unknown>>(text: string): Promise<T[]>
  readonly token: string
}

export async function startTableBench (): Promise<TableBench> {
  const server = await startBenchServer()
  try {
    const token = (await server.json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
    return {
      rows: Number(process.env.BENCH_ROWS ?? 1_000_000),
      runs: Number(process.env.BENCH_RUNS ?? 30),
      server,
      sql: async <T = Record<string, unknown>>(text: string) => benchSql<T>(server.app, text),
      token,
    }
  } catch (err) {
    await server.stop()
    throw err
  }
}

/**
 * Fills `denuncias` up to `bench.rows` in batches of 100,000, each the SQL
 * `insert(from, to)` writes for rows from..to, then vacuums (the visibility
 * map an index-only scan needs); the seconds it took (none when full).
 */
export async function fillDenuncias (bench: TableBench, insert: (from: number, to: number) => string): Promise<number> {
  const t0 = performance.now()
  const n = Number((await bench.sql<{ n: string }>('select count(*) as n from denuncias'))[0]!.n)
  if (n >= bench.rows) return 0
  for (let from = 1; from <= bench.rows; from += 100_000) await bench.sql(insert(from, Math.min(bench.rows, from + 99_999)))
  await bench.sql('vacuum analyze denuncias')
  return (performance.now() - t0) / 1000
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
export const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!

/** A list URL timed over HTTP: 3 warm-up requests, then `runs` sequential ones; its `total`, median and p95 in ms. */
export async function timeList (url: string, token: string, runs: number): Promise<{ total: number, median: number, p95: number }> {
  const headers = { authorization: `Bearer ${token}` }
  let total = 0
  for (let i = 0; i < 3; i++) total = ((await (await fetch(url, { headers })).json()) as any).data.total
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const s = performance.now()
    await (await fetch(url, { headers })).json()
    times.push(performance.now() - s)
  }
  return { total, median: median(times), p95: p95(times) }
}
