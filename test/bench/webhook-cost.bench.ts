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
 * BENCH_DELIVERY=apart: the instance serving the creates runs with
 * WEBHOOK_DELIVERY=false and a second instance, in a child process
 * (delivery-instance.ts), delivers; its CPU is counted apart, and both the
 * serving side's ratio and the whole's are printed. PostgreSQL's CPU is
 * split too: the delivering instance's own backends (application_name
 * `bench-delivery`) are its, the rest (every other backend, the background
 * processes) the serving side's. The sealing of the creates' entries is
 * counted apart in both phases (in the phase with a subscription the
 * delivering instance seals them, within 200 ms), so the serving side's
 * figure is the create's path alone in both.
 *
 *   [BENCH_CREATES=2000] [BENCH_ROUNDS=5] [BENCH_PHASES=with] [BENCH_DELIVERY=apart] npm run bench:webhooks
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
const APART = process.env.BENCH_DELIVERY === 'apart'
/** The delivering instance's PostgreSQL connections name themselves so (node-postgres reads PGAPPNAME). */
const DELIVERY_APP = 'bench-delivery'

/** Jiffies one process spent (0 when it is gone). */
function jiffies (pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
    return Number(f[11]) + Number(f[12])
  } catch { return 0 }
}

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
const server = await startBenchServer(APART ? { env: { WEBHOOK_DELIVERY: 'false' } } : {})
const delivering = APART
  ? spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('delivery-instance.ts', import.meta.url))], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, BENCH_REDIS_PREFIX: server.redisPrefix, PGAPPNAME: DELIVERY_APP } })
  : undefined
if (delivering !== undefined) await new Promise((resolve) => delivering.once('message', resolve))
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
  /** Jiffies of the delivering instance's PostgreSQL backends, by pid (a backend that ends meanwhile counts as the serving side's). */
  const deliveryBackends = async (): Promise<Map<number, number>> => new Map((await sql<{ pid: number }>(`select pid from pg_stat_activity where application_name = '${DELIVERY_APP}'`)).map((r) => [r.pid, jiffies(r.pid)]))
  const backendsSince = async (before: Map<number, number>): Promise<number> => {
    let t = 0
    for (const [pid, now] of await deliveryBackends()) t += now - (before.get(pid) ?? 0)
    return t
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

  const phase = async (subscribed: boolean): Promise<{ serving: number, whole: number }> => {
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
    const d0 = delivering === undefined ? 0 : treeJiffies(delivering.pid!)
    const db0 = await deliveryBackends()
    await load()
    // The creates' events: sealed (both phases pay for it; counted apart, below), and delivered when subscribed.
    const seal0 = process.cpuUsage()
    const pgS = treeJiffies(cluster.pid()!)
    await server.app.checkpoints.sealNow(server.app.orm.em.fork())
    const sealSelf = process.cpuUsage(seal0)
    const sealOwn = sealSelf.user + sealSelf.system
    const sealPg = (treeJiffies(cluster.pid()!) - pgS) * 1e6 / HZ
    const last = await head()
    if (id !== undefined) await until(async () => Number((await sql<{ p: string }>(`select posicion::text as p from sys_suscripciones_estado where suscripcion = '${id}'`))[0]!.p) >= last)
    const self = process.cpuUsage(self0)
    const deliveryPg = APART ? (await backendsSince(db0)) * 1e6 / HZ : 0
    // service, its PostgreSQL, Redis | delivering process, its PostgreSQL | the bench's final sealing
    const parts = [self.user + self.system - sealOwn, (treeJiffies(cluster.pid()!) - pg0) * 1e6 / HZ - deliveryPg - sealPg, (await redisCpu() - r0) * 1e6,
      delivering === undefined ? 0 : (treeJiffies(delivering.pid!) - d0) * 1e6 / HZ, deliveryPg, sealOwn + sealPg].map((x) => x / CREATES)
    if (id !== undefined) {
      const [n] = await sql<{ n: number }>(`select count(*)::int as n from sys_entregas where suscripcion = '${id}' and resultado = 'entregado'`)
      if (n!.n < CREATES) throw new Error(`${n!.n} deliveries recorded for ${CREATES} creates`)
      await server.json('DELETE', `/suscripciones/${id}`, undefined, token)
    }
    const µs = (x: number | undefined): string => x!.toFixed(0)
    breakdown.push(`${subscribed ? 'with' : 'without'}: service ${µs(parts[0])}, PostgreSQL ${µs(parts[1])}, Redis ${µs(parts[2])}${APART ? `, delivering instance ${µs(parts[3])} + its PostgreSQL backends ${µs(parts[4])}` : ''}, the final sealing ${µs(parts[5])} µs per create`)
    // One instance seals its own events (within 200 ms when subscribed): its sealing is its own in both phases.
    const serving = parts[0]! + parts[1]! + parts[2]! + (APART ? 0 : parts[5]!)
    return { serving, whole: parts[0]! + parts[1]! + parts[2]! + parts[3]! + parts[4]! + parts[5]! }
  }

  const breakdown: string[] = []
  await phase(false) // warm-up
  breakdown.length = 0
  const without: Array<{ serving: number, whole: number }> = []
  const withSub: Array<{ serving: number, whole: number }> = []
  for (let r = 0; r < ROUNDS; r++) {
    // BENCH_PHASES=with: only the phases with a subscription (to profile them alone, node --cpu-prof).
    if (process.env.BENCH_PHASES !== 'with') without.push(await phase(false))
    withSub.push(await phase(true))
  }
  if (without.length === 0) without.push({ serving: Number.NaN, whole: Number.NaN })
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const row = (name: string, xs: Array<{ serving: number, whole: number }>, k: 'serving' | 'whole'): string =>
    `| ${name} | ${xs.map((x) => x[k].toFixed(0)).join(', ')} | ${med(xs.map((x) => x[k])).toFixed(0)} |`
  const ratio = (k: 'serving' | 'whole'): string => (med(withSub.map((x) => x[k])) / med(without.map((x) => x[k]))).toFixed(3)
  console.log(`\nPostgreSQL + Redis of its own, ${CREATES} sala092 creates per phase over 10 connections, ${ROUNDS} rounds${APART ? ', delivery on a second instance' : ''}:`)
  console.log(`\n| phase | CPU µs per create (${APART ? 'serving instance + the rest of PostgreSQL + Redis, sealing apart' : 'the instance + PostgreSQL + Redis'}), each round | median |\n|---|---|---|`)
  console.log(row('no subscription', without, 'serving'))
  console.log(row('one active subscription, every event delivered', withSub, 'serving'))
  if (APART) {
    console.log('\n| phase | CPU µs per create, the delivering instance included | median |\n|---|---|---|')
    console.log(row('no subscription', without, 'whole'))
    console.log(row('one active subscription, every event delivered', withSub, 'whole'))
  }
  console.log(`\n${breakdown.join('\n')}`)
  console.log(`\nwith / without: ${ratio('serving')}${APART ? ` for the serving instance, ${ratio('whole')} with the delivering one` : ''} (S18: at most 1.10)`)
} finally {
  receiver.kill()
  if (delivering !== undefined) { delivering.send('stop'); await new Promise((resolve) => delivering.once('exit', resolve)) }
  redisClient.disconnect()
  await server.stop()
  await redis.destroy()
  await cluster.destroy()
}
