/**
 * A private redis-server for tests that must stop, restart or restore
 * Redis (never the shared one): its own free loopback port and its own
 * data directory (where SAVE writes dump.rdb and a restart reads it back,
 * and where it logs to redis.log), stopped by its pid. Needs the
 * redis-server binary. Used by the integration tests and the fault stack.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { freePort } from './free-port.js'

export interface RedisServer {
  readonly url: string
  readonly port: number
  /** Its data directory (dump.rdb, appendonlydir/, redis.log). */
  readonly dir: string
  /** A new client of its own (the caller disconnects it). */
  client (): Redis
  /** SAVE: a snapshot of this moment in dir/dump.rdb. */
  save (): Promise<void>
  /** Number of keys (DBSIZE). */
  size (): Promise<number>
  /** SHUTDOWN NOSAVE: the process ends without writing what changed since the last snapshot. */
  shutdown (): Promise<void>
  /** kill -9: no shutdown, nothing saved; the directory stays. */
  kill (): Promise<void>
  /** Starts it again on the same port and directory (it loads what the directory holds). */
  start (): Promise<void>
  /** Kills it (if running) and removes its directory, unless the caller gave the directory. */
  destroy (): Promise<void>
}

/**
 * `args`: persistence options, e.g. `['--save', '', '--appendonly', 'no']`;
 * `dir`: a directory the caller owns (kept by destroy), else a new one.
 */
export async function startRedisServer (args: string[], opts: { dir?: string } = {}): Promise<RedisServer> {
  const port = await freePort()
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'redis-test-'))
  let proc: ChildProcess | undefined
  const exited = (p: ChildProcess): Promise<void> => p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => p.once('exit', () => { resolve() }))
  const command = async <T>(fn: (r: Redis) => Promise<T>): Promise<T> => ask(port, fn)
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    client: () => new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 }),
    async save () { await command((r) => r.save()) },
    async size () { return command((r) => r.dbsize()) },
    async start () {
      const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--dbfilename', 'dump.rdb', '--logfile', join(dir, 'redis.log'), ...args], { stdio: 'ignore' })
      proc = p
      let exitCode: number | null | undefined
      p.once('exit', (code) => { exitCode = code })
      const deadline = Date.now() + 30_000
      for (;;) {
        if (exitCode !== undefined) throw new Error(`redis-server exited with ${String(exitCode)} (see ${join(dir, 'redis.log')})`)
        if (await command((r) => r.ping()).catch(() => undefined) === 'PONG') return
        if (Date.now() > deadline) throw new Error('redis-server did not start within 30 s')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async shutdown () {
      const gone = exited(proc!)
      await command((r) => r.shutdown('NOSAVE')).catch(() => undefined) // the connection closes under the reply
      await gone
    },
    async kill () {
      if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
        const gone = exited(proc)
        proc.kill('SIGKILL')
        await gone
      }
    },
    async destroy () {
      await server.kill()
      if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true })
    },
  }
  await server.start()
  return server
}

/** One command to the server (or Sentinel) on `port`, on a connection of its own that fails at once when nothing answers there. */
export async function ask<T> (port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null })
  r.on('error', () => undefined)
  try {
    await r.connect()
    return await fn(r)
  } finally {
    r.disconnect()
  }
}

/** Calls per command in an INFO commandstats answer (`cmdstat_evalsha:calls=1,…` → { evalsha: 1 }). */
export function commandCalls (info: string): Record<string, number> {
  const calls: Record<string, number> = {}
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1]!] = Number(m[2])
  return calls
}

/**
 * A redis-server of the calling file's own for its lifetime, with a connected
 * client set up as plugins/redis.ts's (no auto-pipelining): INFO commandstats
 * then counts that file's commands only. Call it in a describe block.
 */
export function usePrivateRedis (): { readonly client: Redis } {
  let server: RedisServer | undefined
  let client: Redis | undefined
  beforeAll(async () => {
    server = await startRedisServer(['--save', '', '--appendonly', 'no'])
    client = new Redis(server.url, { enableAutoPipelining: false, maxRetriesPerRequest: 1 })
    await client.ping() // connected: the stores count the connection they are built on
  })
  afterAll(async () => {
    client?.disconnect()
    await server?.destroy()
  })
  return { get client () { return client! } }
}
