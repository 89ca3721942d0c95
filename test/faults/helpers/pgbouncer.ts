/**
 * Debian's PgBouncer in front of a fault test's PostgreSQL cluster
 * (docs/operations.md "PgBouncer"): its own free loopback port and
 * directory, `pool_mode` as asked, trust authentication as the cluster's,
 * run as the postgres user (it refuses root) and stopped by pid.
 */
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSync, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { freePort } from '../../helpers/free-port.js'
import { exited, GiveUp, startProcess, stopProcess, waitFor } from './processes.js'

export type PoolMode = 'transaction' | 'session'

export interface PgBouncer {
  readonly port: number
  url (db: string): string
  stop (): Promise<void>
}

export async function startPgBouncer (target: { port: number }, mode: PoolMode): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'))
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  chownSync(dir, uid, gid)
  const port = await freePort()
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n')
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=127.0.0.1 port=${target.port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    `pool_mode = ${mode}`,
    // Transaction mode: fewer server connections than the instances' pools hold (3 × 10), so
    // transactions change server connection. Session mode: one per client connection, as
    // docs/operations.md "PgBouncer" asks (with fewer, instances wait for each other's idle ones).
    `default_pool_size = ${mode === 'transaction' ? 20 : 40}`,
    'max_client_conn = 500',
    // The service's connections ask for max_parallel_workers_per_gather=0 in `options`, which PgBouncer
    // cannot pass on: ignored here, set on the database instead (docs/operations.md "PgBouncer").
    'ignore_startup_parameters = extra_float_digits, options',
  ].join('\n') + '\n')
  // Its own pid under the postgres user (not runuser's), so that stopping it stops PgBouncer itself.
  const child: ChildProcess = startProcess('pgbouncer', [join(dir, 'pgbouncer.ini')], { logFile: join(dir, 'pgbouncer.log'), uid, gid, cwd: dir })
  const stop = async (): Promise<void> => {
    await stopProcess(child, 'SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitFor(`pgbouncer on port ${port} (log: ${join(dir, 'pgbouncer.log')})`, async () => {
      if (exited(child)) throw new GiveUp(`pgbouncer exited during start-up; see ${join(dir, 'pgbouncer.log')}`)
      return new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true) })
        s.on('error', () => { resolve(false) })
      })
    }, 30_000, 100)
  } catch (err) {
    await stop()
    throw err
  }
  return { port, url: (db) => `postgres://postgres@127.0.0.1:${port}/${db}`, stop }
}
