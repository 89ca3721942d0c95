/**
 * A Sentinel-managed Redis of a test's own on loopback (docs/operator-guide.md
 * "High availability"): a primary, a replica and three Sentinels (quorum 2),
 * each its own process on a free port, stopped by pid. The Sentinels run
 * Debian's redis-sentinel when it is installed (.ci/run installs it), else
 * `redis-server --sentinel`, the same program. They call the primary down
 * after 1 s of silence, so a promotion takes a few seconds.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './free-port.js'
import { ask, startRedisServer, type RedisServer } from './redis-server.js'

export const GROUP = 'policia'

export interface SentinelGroup {
  /** REDIS_SENTINELS and REDIS_SENTINEL_NAME for an instance. */
  readonly env: { REDIS_SENTINELS: string, REDIS_SENTINEL_NAME: string }
  /** The Redis servers, first the one that was primary at the start. */
  readonly servers: readonly RedisServer[]
  /** The port the Sentinels name as primary now. */
  primaryPort (): Promise<number>
  /** The server that is primary now. */
  primary (): Promise<RedisServer>
  /** Until the Sentinels name another primary than `port`, and it accepts writes; returns its port. */
  promotedFrom (port: number, timeoutMs?: number): Promise<number>
  /**
   * The replica `server` stops receiving the primary's writes, as one cut
   * off by the network: its link is dropped and its handshake then fails
   * (a wrong masterauth), so it keeps what it had and lags from now on.
   */
  detach (server: RedisServer): Promise<void>
  /** Starts `server` (killed earlier) again as a replica of the primary now, until it is in sync and every Sentinel sees it up. */
  rejoin (server: RedisServer): Promise<void>
  /** A planned switchover: `SENTINEL FAILOVER`, the primary demoted alive. */
  switchover (): Promise<void>
  /** Until the server on `port` (a primary before) is a replica: the Sentinels reconfigured it, closing its clients' connections. */
  demoted (port: number): Promise<void>
  /** A client of the primary now (the caller disconnects it). */
  client (): Redis
  destroy (): Promise<void>
}

const sentinelProgram = (): [string, string[]] =>
  spawnSync('sh', ['-c', 'command -v redis-sentinel'], { encoding: 'utf8' }).stdout.trim() !== '' ? ['redis-sentinel', []] : ['redis-server', ['--sentinel']]

async function until (what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

export async function startSentinelGroup (): Promise<SentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'))
  const servers: RedisServer[] = []
  const sentinels: Array<{ port: number, proc: ChildProcess }> = []
  const destroy = async (): Promise<void> => {
    for (const s of sentinels) {
      if (s.proc.exitCode === null && s.proc.signalCode === null) {
        const gone = new Promise((resolve) => s.proc.once('exit', resolve))
        s.proc.kill('SIGKILL')
        await gone
      }
    }
    for (const s of servers) await s.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const persistence = ['--save', '', '--appendonly', 'no']
    const first = await startRedisServer(persistence)
    servers.push(first)
    servers.push(await startRedisServer([...persistence, '--replicaof', '127.0.0.1', String(first.port)]))
    await until('the replica in sync', async () => /master_link_status:up/.test(await ask(servers[1]!.port, async (r) => r.info('replication'))), 30_000)
    const [program, extra] = sentinelProgram()
    for (let i = 1; i <= 3; i++) {
      const port = await freePort()
      const conf = join(dir, `sentinel-${i}.conf`)
      writeFileSync(conf, [
        `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `logfile ${join(dir, `sentinel-${i}.log`)}`,
        `sentinel monitor ${GROUP} 127.0.0.1 ${first.port} 2`,
        `sentinel down-after-milliseconds ${GROUP} 1000`,
        `sentinel failover-timeout ${GROUP} 10000`,
        `sentinel parallel-syncs ${GROUP} 1`,
      ].join('\n') + '\n')
      sentinels.push({ port, proc: spawn(program, [conf, ...extra], { stdio: 'ignore' }) })
    }
    // Each Sentinel has found the replica and the two others (needed to agree on a failover).
    for (const s of sentinels) {
      await until(`Sentinel ${s.port} to know the group`, async () => ask(s.port, async (r) => {
        const others = await r.call('SENTINEL', 'SENTINELS', GROUP) as unknown[]
        const replicas = await r.call('SENTINEL', 'REPLICAS', GROUP) as unknown[]
        return others.length === 2 && replicas.length === 1
      }), 30_000)
    }
  } catch (err) {
    await destroy()
    throw err
  }
  const primaryPort = async (): Promise<number> => {
    for (const s of sentinels) {
      const addr = await ask(s.port, async (r) => r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', GROUP) as Promise<[string, string] | null>).catch(() => null)
      if (addr !== null) return Number(addr[1])
    }
    throw new Error('no Sentinel answers')
  }
  return {
    env: { REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','), REDIS_SENTINEL_NAME: GROUP },
    servers,
    primaryPort,
    async primary () {
      const port = await primaryPort()
      return servers.find((s) => s.port === port)!
    },
    async promotedFrom (port, timeoutMs = 60_000) {
      let now = port
      await until(`a primary other than ${port}`, async () => {
        now = await primaryPort()
        if (now === port) return false
        const role = await ask(now, async (r) => r.call('ROLE') as Promise<unknown[]>)
        return role[0] === 'master'
      }, timeoutMs)
      return now
    },
    async detach (server) {
      await ask(server.port, async (r) => {
        await r.config('SET', 'masterauth', 'not-the-password')
        await r.call('CLIENT', 'KILL', 'TYPE', 'master')
      })
      await until('the replica cut off', async () => /master_link_status:down/.test(await ask(server.port, async (r) => r.info('replication'))), 10_000)
    },
    async rejoin (server) {
      await server.start()
      const primary = await primaryPort()
      await ask(server.port, async (r) => r.replicaof('127.0.0.1', primary))
      await until('the rejoined replica in sync', async () => /master_link_status:up/.test(await ask(server.port, async (r) => r.info('replication'))), 60_000)
      for (const s of sentinels) {
        await until(`Sentinel ${s.port} to see the replica up`, async () => ask(s.port, async (r) => {
          const replicas = await r.call('SENTINEL', 'REPLICAS', GROUP) as string[][]
          return replicas.some((fields) => fields[fields.indexOf('port') + 1] === String(server.port) && !/down/.test(fields[fields.indexOf('flags') + 1] ?? 'down'))
        }), 30_000)
      }
    },
    async demoted (port) {
      await until(`${port} demoted to replica`, async () => (await ask(port, async (r) => r.call('ROLE') as Promise<unknown[]>))[0] === 'slave', 60_000)
    },
    async switchover () {
      await ask(sentinels[0]!.port, async (r) => r.call('SENTINEL', 'FAILOVER', GROUP))
    },
    client: () => new Redis({ sentinels: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })), name: GROUP, maxRetriesPerRequest: 1 }),
    destroy,
  }
}
