/**
 * Service instances as separate processes, started the way an operator
 * starts them (`node --import tsx bin/server.ts`), each on its own port
 * with the same database, Redis and secrets. NODE_ENV is not passed on
 * (vitest sets it to "test").
 */
import type { ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../helpers/free-port.js'
import { GiveUp, exited, startProcess, stopProcess, waitFor } from './processes.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

export interface Instance {
  readonly name: string
  readonly port: number
  readonly url: string
  /** kill -9: no graceful shutdown, in-flight requests are cut. */
  kill9 (): Promise<void>
  /** Starts it again on the same port and waits until /ready says ready. */
  start (): Promise<void>
  stop (): Promise<void>
  running (): boolean
  /** The process id while it runs. */
  pid (): number | undefined
}

export interface InstanceEnv {
  DATABASE_URL: string
  /** Or REDIS_SENTINELS and REDIS_SENTINEL_NAME. */
  REDIS_URL?: string
  DATA_DIR: string
  [name: string]: string | undefined
}

export async function createInstance (name: string, dir: string, env: InstanceEnv): Promise<Instance> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  const instance: Instance = {
    name,
    port,
    url,
    async kill9 () {
      const c = child!
      const gone = new Promise<void>((resolve) => { c.once('exit', () => { resolve() }) })
      process.kill(c.pid!, 'SIGKILL')
      await gone
    },
    async start () {
      child = startProcess(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
        cwd: ROOT,
        logFile: join(dir, `${name}.log`),
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          HOST: '127.0.0.1',
          PORT: String(port),
          TZ: 'Europe/Madrid',
          LOG_LEVEL: 'warn',
          METRICS_PORT: '0',
          RATE_LIMIT_IP_MAX: '10000000',
          RATE_LIMIT_TOKEN_MAX: '10000000',
          RATE_LIMIT_DOCS_MAX: '10000000',
          ...env,
        },
      })
      const c = child
      await waitFor(`instance ${name} on port ${port} (log: ${join(dir, `${name}.log`)})`, async () => {
        if (exited(c)) throw new GiveUp(`instance ${name} exited during start-up; see ${join(dir, `${name}.log`)}`)
        return (await fetch(`${url}/ready`)).status === 200
      }, 120_000, 250)
    },
    async stop () { if (child !== undefined) await stopProcess(child, 'SIGTERM') },
    running: () => child !== undefined && !exited(child),
    pid: () => child === undefined || exited(child) ? undefined : child.pid,
  }
  return instance
}
