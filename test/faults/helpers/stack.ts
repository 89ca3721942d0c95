/**
 * The whole deployment of a fault test, started for that file alone: its
 * own PostgreSQL cluster, its own redis-server (or, with `sentinel`, a
 * primary, a replica and three Sentinels), three service instances as
 * processes and nginx in front of them, all in one temporary directory.
 * `close()` stops every piece by pid (call it in afterAll: it also runs
 * after a failure) and leaves the directory only when KEEP_FAULT_DIRS is
 * set, for reading the logs.
 */
import { mkdtempSync, rmSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { startPgCluster, type PgCluster } from '../../helpers/pg-cluster.js'
import { createInstance, type Instance } from './instances.js'
import { startNginx, type Nginx } from './nginx.js'
import { startRedisServer, type RedisServer } from '../../helpers/redis-server.js'
import { startSentinelGroup, type SentinelGroup } from '../../helpers/redis-sentinel.js'
import { startPgBouncer, type PgBouncer, type PoolMode } from './pgbouncer.js'
import { startPatroniCluster, type PatroniCluster } from './patroni.js'

export const ADMIN = { username: 'admin', password: 'admin-password-123' }

export interface Stack {
  readonly dir: string
  /** The PostgreSQL cluster (without `patroni`). */
  readonly pg?: PgCluster
  /** With `patroni`: the members, etcd and HAProxy the instances reach PostgreSQL through. */
  readonly patroni?: PatroniCluster
  /** The Redis server the instances started on (with `sentinel`, the first primary). */
  readonly redis: RedisServer
  /** With `sentinel`: the group the instances follow. */
  readonly sentinels?: SentinelGroup
  readonly instances: Instance[]
  readonly nginx: Nginx
  /** nginx's address: what clients use. */
  readonly url: string
  /** SQL straight to the service's database. */
  query<T = Record<string, unknown>> (sql: string, params?: unknown[]): Promise<T[]>
  close (): Promise<void>
}

/** `env`: more environment for every instance. */
/**
 * `sentinel`: Redis through Sentinels; `pgbouncer`: the instances reach
 * PostgreSQL through PgBouncer in that pool mode (transaction: with
 * DATABASE_NAMED_STATEMENTS=false, as docs/operations.md says); `patroni`:
 * two Patroni members behind HAProxy instead of one cluster.
 */
export async function startStack (opts: { instances?: number, env?: Record<string, string>, sentinel?: boolean, pgbouncer?: PoolMode, patroni?: boolean } = {}): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'faults-'))
  chmodSync(dir, 0o755) // nginx's workers run unprivileged
  const parts: { pg?: PgCluster, patroni?: PatroniCluster, bouncer?: PgBouncer, redis?: RedisServer, sentinels?: SentinelGroup, instances: Instance[], nginx?: Nginx } = { instances: [] }
  const close = async (): Promise<void> => {
    await parts.nginx?.stop().catch(() => undefined)
    for (const i of parts.instances) await i.stop().catch(() => undefined)
    await parts.redis?.destroy().catch(() => undefined)
    await parts.sentinels?.destroy().catch(() => undefined)
    await parts.bouncer?.stop().catch(() => undefined)
    await parts.pg?.destroy().catch(() => undefined)
    await parts.patroni?.destroy().catch(() => undefined)
    if (process.env.KEEP_FAULT_DIRS === undefined) rmSync(dir, { recursive: true, force: true })
    else console.log(`fault test files kept in ${dir}`)
  }
  try {
    if (opts.patroni === true) parts.patroni = await startPatroniCluster(dir)
    else parts.pg = await startPgCluster()
    const database = (parts.patroni ?? parts.pg)!
    const admin = new pg.Client({ connectionString: database.url('postgres') })
    await admin.connect()
    await admin.query('create database policia')
    await admin.end()
    if (opts.sentinel === true) {
      parts.sentinels = await startSentinelGroup()
    } else {
      parts.redis = await startRedisServer(['--save', '', '--appendonly', 'no'], { dir })
    }
    if (opts.pgbouncer !== undefined) parts.bouncer = await startPgBouncer(parts.pg!, opts.pgbouncer)
    const env = {
      DATABASE_URL: parts.bouncer?.url('policia') ?? database.url('policia'),
      ...(opts.pgbouncer === 'transaction' && { DATABASE_NAMED_STATEMENTS: 'false' }),
      ...(parts.sentinels !== undefined ? parts.sentinels.env : { REDIS_URL: parts.redis!.url }),
      DATA_DIR: join(dir, 'data'),
      JWT_SECRET: 'fault-test-secret-that-is-long-enough-for-hs256',
      ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      ...opts.env,
    }
    for (let i = 1; i <= (opts.instances ?? 3); i++) parts.instances.push(await createInstance(`instance-${i}`, dir, env))
    // The first creates the schema and the superadmin; the others then start together.
    await parts.instances[0]!.start()
    await Promise.all(parts.instances.slice(1).map((i) => i.start()))
    parts.nginx = await startNginx(dir, parts.instances.map((i) => i.port))
  } catch (err) {
    await close()
    throw err
  }
  const database = (parts.patroni ?? parts.pg)!
  return {
    dir,
    ...(parts.pg !== undefined && { pg: parts.pg }),
    ...(parts.patroni !== undefined && { patroni: parts.patroni }),
    redis: parts.redis ?? parts.sentinels!.servers[0]!,
    ...(parts.sentinels !== undefined && { sentinels: parts.sentinels }),
    instances: parts.instances,
    nginx: parts.nginx,
    url: parts.nginx.url,
    async query (sql, params) {
      const c = new pg.Client({ connectionString: database.url('policia') })
      await c.connect()
      try { return (await c.query(sql, params)).rows } finally { await c.end() }
    },
    close,
  }
}

export interface Reply {
  status: number
  body: any
}

/** One JSON request (fetch), for the few calls a scenario makes by hand. */
export async function call (base: string, method: string, path: string, opts: { token?: string, body?: unknown } = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(opts.token !== undefined && { authorization: `Bearer ${opts.token}` }), ...(opts.body !== undefined && { 'content-type': 'application/json' }) },
    ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
  })
  const text = await res.text()
  let body: unknown = text
  try { body = JSON.parse(text) } catch { /* not JSON (a gateway error page) */ }
  return { status: res.status, body }
}

export async function login (base: string, username = ADMIN.username, password = ADMIN.password): Promise<string> {
  const res = await call(base, 'POST', '/auth/login', { body: { username, password } })
  if (res.status !== 200) throw new Error(`login of ${username} answered ${res.status}: ${JSON.stringify(res.body)}`)
  return (res.body as { data: { token: string } }).data.token
}

/**
 * Every instance answers GET /ready with 200 within `withinMs` of `since`
 * (the fault). An instance may still be in its client's reconnection
 * back-off when the load's last acknowledgement arrives through the
 * others, so this waits up to the scenario's bound instead of asking once.
 */
export async function everyReady (stack: Stack, since: number, withinMs = 30_000): Promise<void> {
  for (const i of stack.instances) {
    for (;;) {
      const status = (await call(i.url, 'GET', '/ready').catch(() => ({ status: 0 }))).status
      if (status === 200) break
      if (Date.now() - since > withinMs) throw new Error(`${i.name} still answers GET /ready with ${status} ${Date.now() - since} ms after the fault`)
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }
}
