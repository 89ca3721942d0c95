/**
 * A PostgreSQL cluster of a test's own, for tests that stop and start the
 * database: `initdb` into a temporary directory (as the postgres user, since
 * initdb refuses root), `pg_ctl` on a free loopback port, its socket in the
 * same directory. Never the machine's shared PostgreSQL. `destroy()` stops
 * it by pid and removes the directory; call it in afterAll.
 */
import { spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'


export type StopMode = 'smart' | 'fast' | 'immediate'

export interface PgCluster {
  readonly port: number
  readonly dir: string
  /** URL of a database of this cluster. */
  url (db?: string): string
  /** pg_ctl stop -m <mode>, waiting until the server is gone. */
  stop (mode?: StopMode): Promise<void>
  /** pg_ctl start, waiting until it accepts connections (unless `standby`). */
  start (opts?: { standby?: boolean }): Promise<void>
  /** What pg_isready says: accepting connections, rejecting them (starting up, standby), or no answer. */
  state (): Promise<'accepting' | 'rejecting' | 'down'>
  /** The postmaster's pid while running. */
  pid (): number | undefined
  /** Stops it whatever its state (by pid) and removes the directory. */
  destroy (): Promise<void>
}

/** Runs a PostgreSQL program as the postgres user, without blocking the event loop (the app under test shares it). */
async function run (args: string[], cwd: string): Promise<{ status: number | null, out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('runuser', ['-u', 'postgres', '--', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => { out += String(d) })
    child.stderr.on('data', (d: Buffer) => { out += String(d) })
    child.once('error', reject)
    // 'exit', not 'close': the postmaster pg_ctl leaves behind must not hold us.
    child.once('exit', (status) => { setImmediate(() => { resolve({ status, out }) }) })
  })
}

export async function startPgCluster (): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'pgc-'))
  const data = join(dir, 'data')
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  chownSync(dir, uid, gid)
  const init = await run(['initdb', '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'], dir)
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.out}`)
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`

  const pid = (): number | undefined => {
    const file = join(data, 'postmaster.pid')
    if (!existsSync(file)) return undefined
    const n = Number(readFileSync(file, 'utf8').split('\n')[0])
    return Number.isInteger(n) && n > 0 ? n : undefined
  }
  const standbySignal = join(data, 'standby.signal')

  const cluster: PgCluster = {
    port,
    dir,
    url: (db = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${db}`,
    async stop (mode = 'fast') {
      const r = await run(['pg_ctl', '-D', data, '-m', mode, '-w', '-t', '60', 'stop'], dir)
      if (r.status !== 0) throw new Error(`pg_ctl stop failed:\n${r.out}`)
    },
    async start (opts = {}) {
      // A standby with hot_standby off never accepts connections: every
      // attempt is refused with 57P03, as while the server is starting up.
      if (opts.standby === true) writeFileSync(standbySignal, '')
      else if (existsSync(standbySignal)) unlinkSync(standbySignal)
      const extra = opts.standby === true ? ' -c hot_standby=off' : ''
      const r = await run(['pg_ctl', '-D', data, '-l', join(dir, 'server.log'), '-o', options + extra, ...(opts.standby === true ? ['-W'] : ['-w', '-t', '60']), 'start'], dir)
      if (r.status !== 0) throw new Error(`pg_ctl start failed:\n${r.out}\n${readLog(dir)}`)
    },
    async state () {
      const r = await new Promise<number | null>((resolve) => {
        const child = spawn('pg_isready', ['-h', '127.0.0.1', '-p', String(port), '-t', '5'], { stdio: 'ignore' })
        child.once('error', () => { resolve(null) })
        child.once('exit', resolve)
      })
      return r === 0 ? 'accepting' : r === 1 ? 'rejecting' : 'down'
    },
    pid,
    async destroy () {
      const p = pid()
      if (p !== undefined) {
        try { process.kill(p, 'SIGQUIT') } catch { /* already gone */ }
        for (let i = 0; i < 100 && alive(p); i++) await new Promise((resolve) => setTimeout(resolve, 100))
        if (alive(p)) try { process.kill(p, 'SIGKILL') } catch { /* gone */ }
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
  try {
    await cluster.start()
  } catch (err) {
    await cluster.destroy()
    throw err
  }
  return cluster
}

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

function readLog (dir: string): string {
  try { return readFileSync(join(dir, 'server.log'), 'utf8').split('\n').slice(-20).join('\n') } catch { return '' }
}
