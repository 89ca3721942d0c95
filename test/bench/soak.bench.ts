/**
 * `npm run bench:soak`: one instance of the built service (dist/, as
 * production runs it) under a mixed load for SOAK_SECONDS (600), its
 * resident memory sampled every 5 s from /proc (docs/performance.md
 * "Memory under a mixed soak"). The mix, drawn at random per request:
 * reads by id 40 %, filtered lists 15 %, searches 10 %, creates 20 %,
 * updates 10 %, GET /me 5 %, with SOAK_TOKENS tokens (20) of as many
 * users. Prints a line per minute and, at the end, the table and whether
 * the memory stayed under SOAK_MAX_MB (250) and flat (the last minute's
 * mean within 10 % of the second minute's). Embedded by default; with
 * DATABASE_URL it creates a database of its own on that server and drops
 * it after, with REDIS_URL its own key prefix, removed after.
 *
 *   [SOAK_SECONDS=600] [SOAK_CONNECTIONS=8] [SOAK_TOKENS=20] [SOAK_MAX_MB=250] [SOAK_NODE_FLAGS=…] npm run bench:soak
 *   npm run bench:soak -- --help
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import pg from 'pg'
import { Redis } from 'ioredis'

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0]!.replace(/^\/\*\*\n/, '').replace(/^ \* ?/gm, ''))
  process.exit(0)
}

const seconds = Number(process.env.SOAK_SECONDS ?? 600)
const connections = Number(process.env.SOAK_CONNECTIONS ?? 8)
const tokens = Number(process.env.SOAK_TOKENS ?? 20)
const maxMb = Number(process.env.SOAK_MAX_MB ?? 250)
const root = resolve(fileURLToPath(import.meta.url), '../../..')
const server = join(root, 'dist/bin/server.js')
if (!existsSync(server)) {
  process.stderr.write('no build: run npm run build first (the soak measures the built service, as production runs it)\n')
  process.exit(2)
}
const log = (line: string): void => { process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`) }

// A database and a key prefix of the soak's own.
const stamp = `soak_${Date.now()}`
let databaseUrl: string | undefined
if (process.env.DATABASE_URL) {
  const url = new URL(process.env.DATABASE_URL)
  const admin = new pg.Client({ connectionString: url.toString() })
  await admin.connect()
  await admin.query(`create database ${stamp}`)
  await admin.end()
  url.pathname = `/${stamp}`
  databaseUrl = url.toString()
}
const redisPrefix = `${stamp}:`
const dataDir = mkdtempSync(join(tmpdir(), 'policia-soak-'))
const port = 20_000 + Math.floor(Math.random() * 10_000)
const metricsPort = port + 1
const base = `http://127.0.0.1:${port}`
const admin = { username: 'soak', password: 'soak-password-123' }

const child = spawn(process.execPath, [...(process.env.SOAK_NODE_FLAGS ?? '').split(' ').filter(Boolean), server], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: {
    ...process.env,
    ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
    NODE_ENV: 'development',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    METRICS_PORT: String(metricsPort),
    JWT_SECRET: 'soak-jwt-secret-of-at-least-32-characters',
    ENCRYPTION_KEY: Buffer.from('soak-encryption-key-32-bytes!!!!').toString('base64'),
    ADMIN_USERNAME: admin.username,
    ADMIN_PASSWORD: admin.password,
    RATE_LIMIT_IP_MAX: '100000000',
    RATE_LIMIT_TOKEN_MAX: '100000000',
    REDIS_PREFIX: redisPrefix,
  },
})

async function cleanUp (): Promise<void> {
  if (child.exitCode === null) {
    child.kill('SIGTERM')
    await new Promise((done) => child.once('exit', done))
  }
  rmSync(dataDir, { recursive: true, force: true })
  if (databaseUrl !== undefined) {
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL })
    await c.connect()
    await c.query(`drop database if exists ${stamp} with (force)`)
    await c.end()
  }
  if (process.env.REDIS_URL) {
    const r = new Redis(process.env.REDIS_URL)
    const keys = await r.keys(`${redisPrefix}*`)
    if (keys.length > 0) await r.del(...keys)
    r.disconnect()
  }
}

async function json (method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token !== undefined && { authorization: `Bearer ${token}` }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  return await res.json()
}

/** V8's heap in use and the memory outside it (Buffers, WebAssembly), MB, from the service's GET /metrics. */
async function heapMb (): Promise<{ heap: number, external: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0) / 2 ** 20
  return { heap: value('nodejs_heap_size_used_bytes'), external: value('nodejs_external_memory_bytes') }
}

/** Resident memory of the service's process, MB. */
function rssMb (): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
  return Number(m?.[1] ?? 0) / 1024
}

const words = ['ruido', 'accidente', 'robo', 'incendio', 'pelea', 'animal', 'vehículo', 'alarma']
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!

try {
  log(`starting the service (${databaseUrl !== undefined ? 'PostgreSQL' : 'embedded'}, ${process.env.REDIS_URL ? 'Redis' : 'in-process stores'}) on ${base}`)
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`)
    if (await fetch(`${base}/ready`).then((r) => r.ok, () => false)) break
    if (i > 600) throw new Error('the service did not become ready within 60 s')
    await new Promise((done) => setTimeout(done, 100))
  }
  const adminToken = (await json('POST', '/auth/login', admin)).data.token as string
  const auths: string[] = [adminToken]
  for (let i = 1; i < tokens; i++) {
    const username = `soak-${i}`
    await json('POST', '/usuarios', { username, password: 'soak-password-123', nombre: `Soak ${i}`, rol: 'administrador' }, adminToken)
    auths.push((await json('POST', '/auth/login', { username, password: 'soak-password-123' })).data.token as string)
  }
  log(`seeding 2,000 calls with ${tokens} tokens`)
  const ids: string[] = []
  for (let i = 0; i < 2000; i++) {
    const res = await json('POST', '/sala092', { tipo_incidencia: pick(['urgente', 'normal', 'informacion']), descripcion: `${pick(words)} en la calle ${i}` }, pick(auths))
    ids.push(res.data._id as string)
  }

  const samples: Array<{ at: number, mb: number, heap: number, external: number }> = []
  const started = Date.now()
  const sample = async (): Promise<void> => {
    const { heap, external } = await heapMb().catch(() => ({ heap: 0, external: 0 }))
    samples.push({ at: (Date.now() - started) / 1000, mb: rssMb(), heap, external })
    const minute = Math.floor((Date.now() - started) / 60_000)
    const last = samples.at(-1)!
    if (samples.length > 1 && Math.floor(samples.at(-2)!.at / 60) < minute) log(`minute ${minute}: RSS ${last.mb.toFixed(0)} MB, heap used ${last.heap.toFixed(0)} MB, external ${last.external.toFixed(0)} MB`)
  }
  const sampler = setInterval(() => { void sample() }, 5000)
  log(`mixed load for ${seconds} s, ${connections} connections`)
  const result = await autocannon({
    url: base,
    connections,
    duration: seconds,
    requests: [{
      setupRequest: (req) => {
        const headers = { authorization: `Bearer ${pick(auths)}`, 'content-type': 'application/json' }
        const r = Math.random()
        if (r < 0.40) return { ...req, method: 'GET', path: `/sala092/${pick(ids)}`, headers }
        if (r < 0.55) return { ...req, method: 'GET', path: `/sala092?tipo_incidencia=${pick(['urgente', 'normal'])}&limit=20`, headers }
        if (r < 0.65) return { ...req, method: 'GET', path: `/sala092?q=${encodeURIComponent(pick(words))}&limit=20`, headers }
        if (r < 0.85) return { ...req, method: 'POST', path: '/sala092', headers, body: JSON.stringify({ tipo_incidencia: 'normal', descripcion: `${pick(words)} durante la prueba` }) }
        if (r < 0.95) return { ...req, method: 'PUT', path: `/sala092/${pick(ids)}`, headers, body: JSON.stringify({ descripcion: `${pick(words)} revisado` }) }
        return { ...req, method: 'GET', path: '/me', headers }
      },
    }],
  })
  clearInterval(sampler)
  await sample()

  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
  const inMinute = (m: number): number[] => samples.filter((s) => s.at >= m * 60 && s.at < (m + 1) * 60).map((s) => s.mb)
  const minutes = Math.ceil(seconds / 60)
  const peak = Math.max(...samples.map((s) => s.mb))
  const second = mean(inMinute(Math.min(1, minutes - 1)))
  const lastMinute = mean(inMinute(minutes - 1))
  const flat = lastMinute <= second * 1.1
  process.stdout.write('\n| minute | RSS MB, mean | RSS MB, max | heap used MB, max | external MB, max |\n|---|---|---|---|---|\n')
  for (let m = 0; m < minutes; m++) {
    const xs = inMinute(m)
    const of = samples.filter((s) => s.at >= m * 60 && s.at < (m + 1) * 60)
    if (xs.length > 0) process.stdout.write(`| ${m + 1} | ${mean(xs).toFixed(0)} | ${Math.max(...xs).toFixed(0)} | ${Math.max(...of.map((s) => s.heap)).toFixed(0)} | ${Math.max(...of.map((s) => s.external)).toFixed(0)} |\n`)
  }
  const non2xx = result.non2xx
  process.stdout.write(`\n${Math.round(result.requests.average)} req/s, ${result.requests.total} requests, ${non2xx} not 2xx, ${result.errors} errors\n`)
  process.stdout.write(`peak ${peak.toFixed(0)} MB (limit ${maxMb}): ${peak <= maxMb ? 'under' : 'OVER'}; last minute ${lastMinute.toFixed(0)} MB against the second's ${second.toFixed(0)}: ${flat ? 'flat' : 'GROWING'}\n`)
  process.exitCode = peak <= maxMb && flat && non2xx === 0 ? 0 : 1
} finally {
  await cleanUp()
}
