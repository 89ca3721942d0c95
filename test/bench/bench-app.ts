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

export const BENCH_ADMIN = { username: 'bench', password: 'bench-password-123' }

export interface BenchServer {
  readonly app: FastifyInstance
  /** http://127.0.0.1:<port> */
  readonly base: string
  /** One JSON request over HTTP; the parsed answer. */
  json (method: string, path: string, body?: unknown, token?: string): Promise<any>
  stop (): Promise<void>
}

export async function startBenchServer (): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'policia-bench-'))
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ADMIN_USERNAME: BENCH_ADMIN.username,
    ADMIN_PASSWORD: BENCH_ADMIN.password,
    RATE_LIMIT_IP_MAX: '100000000',
    RATE_LIMIT_TOKEN_MAX: '100000000',
    REDIS_PREFIX: `bench:${Date.now()}:`,
  })
  const app = await buildApp({ config, logger: { level: 'warn' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  return {
    app,
    base,
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
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
