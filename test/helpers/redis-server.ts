/**
 * A private redis-server for tests that must stop, restart or restore
 * Redis (never the shared one): its own free loopback port and its own
 * data directory, stopped by its pid. Needs the redis-server binary.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './free-port.js'

export interface RedisServer {
  readonly url: string
  /** Its data directory (dump.rdb, appendonlydir/). */
  readonly dir: string
  /** A new client of its own (the caller disconnects it). */
  client (): Redis
  /** SHUTDOWN NOSAVE: the process ends without writing a snapshot. */
  shutdown (): Promise<void>
  /** Starts it again on the same port and directory (it loads what the directory holds). */
  start (): Promise<void>
  /** Kills it (if running) and removes its directory. */
  destroy (): Promise<void>
}

/** `args`: persistence options, e.g. `['--save', '', '--appendonly', 'no']`. */
export async function startRedisServer (args: string[]): Promise<RedisServer> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'))
  let proc: ChildProcess | undefined
  const exited = (p: ChildProcess): Promise<void> => p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => p.once('exit', () => { resolve() }))
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    dir,
    client: () => new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 }),
    async start () {
      const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...args], { stdio: ['ignore', 'pipe', 'ignore'] })
      proc = p
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => { reject(new Error('redis-server did not start')) }, 10_000)
        p.stdout!.on('data', (d: Buffer) => { if (/Ready to accept connections/.test(String(d))) { clearTimeout(timer); resolve() } })
        p.once('exit', (code) => { clearTimeout(timer); reject(new Error(`redis-server exited with ${String(code)}`)) })
      })
    },
    async shutdown () {
      const p = proc!
      const gone = exited(p)
      const c = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null })
      c.on('error', () => undefined)
      await c.shutdown('NOSAVE').catch(() => undefined) // the connection closes under the reply
      c.disconnect()
      await gone
    },
    async destroy () {
      if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
        const gone = exited(proc)
        proc.kill('SIGKILL')
        await gone
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await server.start()
  return server
}
