/**
 * A redis-server of the test's own: free loopback port, its own directory
 * (where SAVE writes dump.rdb and a restart reads it back), no automatic
 * snapshots and no append-only file. Never the machine's shared Redis.
 */
import type { ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from '../../helpers/free-port.js'
import { startProcess, stopProcess, waitFor } from './processes.js'

export interface RedisServer {
  readonly url: string
  /** SAVE: a snapshot of this moment in dir/dump.rdb. */
  save (): Promise<void>
  /** SHUTDOWN NOSAVE: gone without writing what changed since the last snapshot. */
  crash (): Promise<void>
  /** Starts redis-server again on the same port and directory (it loads dump.rdb). */
  start (): Promise<void>
  /** Number of keys (DBSIZE). */
  size (): Promise<number>
  stop (): Promise<void>
}

export async function startRedisServer (dir: string): Promise<RedisServer> {
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  const command = async <T>(fn: (r: Redis) => Promise<T>): Promise<T> => {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false })
    r.on('error', () => undefined)
    await r.connect()
    try { return await fn(r) } finally { r.disconnect() }
  }
  const server: RedisServer = {
    url,
    async save () { await command((r) => r.save()) },
    async crash () {
      const c = child!
      const gone = new Promise<void>((resolve) => { c.once('exit', () => { resolve() }) })
      await command((r) => r.call('SHUTDOWN', 'NOSAVE')).catch(() => undefined) // the connection drops as it answers
      await gone
    },
    async start () {
      child = startProcess('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--dbfilename', 'dump.rdb', '--save', '', '--appendonly', 'no'], { logFile: join(dir, 'redis.log') })
      await waitFor('redis-server', async () => (await command((r) => r.ping())) === 'PONG', 30_000)
    },
    async size () { return command((r) => r.dbsize()) },
    async stop () { if (child !== undefined) await stopProcess(child, 'SIGKILL') },
  }
  await server.start()
  return server
}
