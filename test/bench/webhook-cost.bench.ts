/**
 * `npm run bench:webhooks` (docs/performance.md "Events"): what an active
 * webhook subscription adds to the CPU of a create (SPEC S18 "Cost": at
 * most 10 % more than without subscribers). Its own PostgreSQL cluster and
 * redis-server (so their CPU is the service's alone, read from /proc and
 * from Redis's INFO), the service in this process, the creates sent by
 * autocannon in a child process and the receiver in another, so neither
 * counts. Phases alternate: BENCH_CREATES (default 2000) sala092 creates
 * over 10 connections without a subscription, then with one to sala092
 * (every event signed and POSTed), each phase measured until its last
 * event is sealed (without) or delivered (with). Not part of `npm test`.
 *
 *   [BENCH_CREATES=2000] [BENCH_ROUNDS=5] [BENCH_PHASES=with] npm run bench:webhooks
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { startPgCluster } from '../helpers/pg-cluster.js'
import { startRedisServer } from '../helpers/redis-server.js'
import { BENCH_ADMIN, benchSql, startBenchServer } from './bench-app.js'

const CREATES = Number(process.env.BENCH_CREATES ?? 2000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const HZ = 100

/** Jiffies a process and its children (live and reaped) spent. */
function treeJiffies (pid: number): number {
  const fields = (p: number): string[] => readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  const own = fields(pid)
  let t = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
  for (const line of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean)) {
    try { const f = fields(Number(line)); t += Number(f[11]) + Number(f[12]) } catch { /* gone meanwhile */ }
  }
  return t
}

const cluster = await startPgCluster()
const redis = await startRedisServer(['--save', '', '--appendonly', 'no'])
const admin = new pg.Client({ connectionString: cluster.url() })
await admin.connect()
await admin.query('create database bench')
await admin.end()
Object.assign(process.env, { DATABASE_URL: cluster.url('bench'), REDIS_URL: redis.url, WEBHOOK_ALLOW_PRIVATE: 'true', CHECKPOINT_INTERVAL: '3600' })
const server = await startBenchServer()
const receiver = spawn(process.execPath, ['-e', "require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('ok')) }).listen(0, '127.0.0.1', function () { console.log(this.address().port) })"], { stdio: ['ignore', 'pipe', 'inherit'] })
const redisClient = redis.client()

try {
  const receiverPort = await new Promise<number>((resolve) => { receiver.stdout!.once('data', (d: Buffer) => { resolve(Number(d.toString().trim())) }) })
  const token = (await server.json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
  const sql = async <T>(text: string): Promise<T[]> => benchSql<T>(server.app, text)
  const redisCpu = async (): Promise<number> => {
    const info = await redisClient.info('cpu')
    return ['used_cpu_sys', 'used_cpu_user'].reduce((s, k) => s + Number(new RegExp(`${k}:([\\d.]+)`).exec(info)![1]), 0)
  }
  const head = async (): Promise<number> => Number((await sql<{ n: string | null }>('select max(seq)::text as n from sys_cadena'))[0]!.n ?? 0)
  const until = async (ok: () => Promise<boolean>): Promise<void> => { while (!await ok()) await new Promise((resolve) => setTimeout(resolve, 20)) }
  const load = async (): Promise<void> => new Promise((resolve, reject) => {
    const child = spawn(`${ROOT}node_modules/.bin/autocannon`, ['-c', '10', '-a', String(CREATES), '-m', 'POST', '-H', 'content-type=application/json', '-H', `authorization=Bearer ${token}`,
      '-b', JSON.stringify({ tipo_incidencia: 'urgente', descripcion: 'Llamada de la carga', ubicacion: 'Calle Mayor' }), `${server.base}/sala092`], { stdio: ['ignore', 'ignore', 'pipe'] })
    let out = ''
    child.stderr!.on('data', (d: Buffer) => { out += d.toString() })
    child.on('exit', (code) => { if (code === 0 && !/non 2xx responses/.test(out)) resolve(); else reject(new Error(`autocannon: ${out}`)) })
  })

  const phase = async (subscribed: boolean): Promise<number> => {
    let id: string | undefined
    if (subscribed) {
      const res = await server.json('POST', '/suscripciones', { url: `http://127.0.0.1:${receiverPort}/bench`, modulos: ['sala092'], rol: 'superadmin' }, token)
      id = res.data._id as string
      await until(async () => (await sql<{ n: number }>(`select count(*)::int as n from sys_suscripciones_estado where suscripcion = '${id}' and arrendatario is not null`))[0]!.n === 1)
    }
    await server.app.checkpoints.sealNow(server.app.orm.em.fork())
    const self0 = process.cpuUsage()
    const pg0 = treeJiffies(cluster.pid()!)
    const r0 = await redisCpu()
    await load()
    // The creates' events: sealed (both phases pay for it), and delivered when subscribed.
    await server.app.checkpoints.sealNow(server.app.orm.em.fork())
    const last = await head()
    if (id !== undefined) await until(async () => Number((await sql<{ p: string }>(`select posicion::text as p from sys_suscripciones_estado where suscripcion = '${id}'`))[0]!.p) >= last)
    const self = process.cpuUsage(self0)
    const parts = [self.user + self.system, (treeJiffies(cluster.pid()!) - pg0) * 1e6 / HZ, (await redisCpu() - r0) * 1e6].map((x) => x / CREATES)
    if (id !== undefined) {
      const [n] = await sql<{ n: number }>(`select count(*)::int as n from sys_entregas where suscripcion = '${id}' and resultado = 'entregado'`)
      if (n!.n < CREATES) throw new Error(`${n!.n} deliveries recorded for ${CREATES} creates`)
      await server.json('DELETE', `/suscripciones/${id}`, undefined, token)
    }
    breakdown.push(`${subscribed ? 'with' : 'without'}: service ${parts[0]!.toFixed(0)}, PostgreSQL ${parts[1]!.toFixed(0)}, Redis ${parts[2]!.toFixed(0)} µs per create`)
    return parts[0]! + parts[1]! + parts[2]!
  }

  const breakdown: string[] = []
  await phase(false) // warm-up
  breakdown.length = 0
  const without: number[] = []
  const withSub: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    // BENCH_PHASES=with: only the phases with a subscription (to profile them alone, node --cpu-prof).
    if (process.env.BENCH_PHASES !== 'with') without.push(await phase(false))
    withSub.push(await phase(true))
  }
  if (without.length === 0) without.push(Number.NaN)
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(`\nPostgreSQL + Redis of its own, ${CREATES} sala092 creates per phase over 10 connections, ${ROUNDS} rounds:`)
  console.log('\n| phase | CPU µs per create (service + PostgreSQL + Redis), each round | median |\n|---|---|---|')
  console.log(`| no subscription | ${without.map((x) => x.toFixed(0)).join(', ')} | ${med(without).toFixed(0)} |`)
  console.log(`| one active subscription, every event delivered | ${withSub.map((x) => x.toFixed(0)).join(', ')} | ${med(withSub).toFixed(0)} |`)
  console.log(`\n${breakdown.join('\n')}`)
  console.log(`\nwith / without: ${(med(withSub) / med(without)).toFixed(3)} (S18: at most 1.10)`)
} finally {
  receiver.kill()
  redisClient.disconnect()
  await server.stop()
  await redis.destroy()
  await cluster.destroy()
}
