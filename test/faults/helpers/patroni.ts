/**
 * PostgreSQL under Patroni for the failover scenarios (docs/operations.md
 * "High availability"), all from Debian's packages on loopback: a
 * one-member etcd, two Patroni members in synchronous mode and HAProxy
 * routing to the member whose REST API answers `GET /primary`. Each piece
 * is its own process (Patroni and PostgreSQL as the postgres user, which
 * they need), on free ports, in one directory, stopped by pid. Timings are
 * short for a test (ttl 10 s, loop_wait 1 s): a dead primary's lock
 * expires within 10 s. Patroni speaks etcd's v2 API: Debian 12's Patroni
 * 3.0.2 on the v3 API let a primary that resumed after a stall overwrite
 * the new leader's key, and the new primary's acknowledged writes were
 * rewound away (docs/decisions.md "Patroni on etcd's v2 API").
 */
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { freePort } from '../../helpers/free-port.js'
import { exited, GiveUp, startProcess, stopProcess, waitFor } from './processes.js'

export interface Member {
  readonly name: string
  readonly pgPort: number
  readonly apiPort: number
  /** Patroni's pid while it runs. */
  patroniPid (): number | undefined
  /** The postmaster's pid while it runs. */
  postgresPid (): number | undefined
  /** Starts its Patroni again (it rejoins as a replica, rewinding if it must). */
  start (): Promise<void>
}

export interface PatroniCluster {
  readonly members: readonly Member[]
  /** HAProxy's URL for `db`: what the instances use. */
  url (db: string): string
  /** The member holding the leader lock now. */
  leader (): Promise<Member>
  /** Until a member other than `name` is the primary and HAProxy routes to it. */
  promotedFrom (name: string, timeoutMs?: number): Promise<Member>
  /** Until every member runs, one leads and the other is its synchronous standby. */
  healthy (timeoutMs?: number): Promise<void>
  /** `patronictl switchover` to the other member, now. */
  switchover (): Promise<void>
  destroy (): Promise<void>
}

const BIN = (): string => {
  const versions = spawnSync('ls', ['/usr/lib/postgresql'], { encoding: 'utf8' }).stdout.trim().split('\n').sort((a, b) => Number(b) - Number(a))
  return `/usr/lib/postgresql/${versions[0]!}/bin`
}

const portOpen = (port: number): Promise<boolean> => new Promise((resolve) => {
  const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true) })
  s.on('error', () => { resolve(false) })
})

async function api (port: number, path: string): Promise<{ status: number, body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2000) })
  return { status: res.status, body: await res.json().catch(() => undefined) }
}

export async function startPatroniCluster (dir: string): Promise<PatroniCluster> {
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const root = join(dir, 'patroni')
  mkdirSync(root)
  chownSync(root, uid, gid)
  const children: ChildProcess[] = []
  const [etcdClient, etcdPeer] = [await freePort(), await freePort()]
  const etcd = startProcess('etcd', [
    '--name', 'e1', '--data-dir', join(root, 'etcd'),
    '--listen-client-urls', `http://127.0.0.1:${etcdClient}`, '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`,
    '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`,
    '--initial-cluster', `e1=http://127.0.0.1:${etcdPeer}`, '--enable-v2',
  ], { logFile: join(root, 'etcd.log') })
  children.push(etcd)
  const destroy = async (): Promise<void> => {
    for (const c of [...children].reverse()) await stopProcess(c, 'SIGKILL').catch(() => undefined)
    // A postmaster whose Patroni was killed outlives it: stop it by its pid file.
    for (const m of ['m1', 'm2']) {
      const file = join(root, m, 'postmaster.pid')
      if (existsSync(file)) try { process.kill(Number(readFileSync(file, 'utf8').split('\n')[0]), 'SIGKILL') } catch { /* gone */ }
    }
    if (process.env.KEEP_FAULT_DIRS === undefined) rmSync(root, { recursive: true, force: true })
  }
  try {
    await waitFor('etcd', async () => { if (exited(etcd)) throw new GiveUp(`etcd exited; see ${join(root, 'etcd.log')}`); return portOpen(etcdClient) }, 30_000)
    const members: Member[] = []
    const running = new Map<string, ChildProcess>()
    for (const name of ['m1', 'm2']) {
      const [pgPort, apiPort] = [await freePort(), await freePort()]
      const config = join(root, `${name}.yml`)
      writeFileSync(config, `scope: policia
name: ${name}
restapi: { listen: '127.0.0.1:${apiPort}', connect_address: '127.0.0.1:${apiPort}' }
etcd: { host: '127.0.0.1:${etcdClient}' }
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      remove_data_directory_on_diverged_timelines: true
      parameters: { fsync: 'off', max_connections: 100 }
  initdb: [{ encoding: UTF8 }, { auth: trust }]
  pg_hba: ['host replication all 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 trust']
postgresql:
  listen: '127.0.0.1:${pgPort}'
  connect_address: '127.0.0.1:${pgPort}'
  data_dir: ${join(root, name)}
  bin_dir: ${BIN()}
  pgpass: ${join(root, `${name}.pgpass`)}
  authentication: { superuser: { username: postgres }, replication: { username: postgres }, rewind: { username: postgres } }
  parameters: { unix_socket_directories: '${root}' }
`)
      chownSync(config, uid, gid)
      const postgresPid = (): number | undefined => {
        const file = join(root, name, 'postmaster.pid')
        if (!existsSync(file)) return undefined
        const pid = Number(readFileSync(file, 'utf8').split('\n')[0])
        try { process.kill(pid, 0); return pid } catch { return undefined }
      }
      const member: Member = {
        name,
        pgPort,
        apiPort,
        patroniPid: () => { const c = running.get(name); return c === undefined || exited(c) ? undefined : c.pid },
        postgresPid,
        async start () {
          const child = startProcess('patroni', [config], { logFile: join(root, `${name}.log`), uid, gid, cwd: root })
          children.push(child)
          running.set(name, child)
          await waitFor(`Patroni ${name}'s REST API`, async () => { if (exited(child)) throw new GiveUp(`patroni ${name} exited; see ${join(root, `${name}.log`)}`); return portOpen(apiPort) }, 60_000)
        },
      }
      members.push(member)
      await member.start()
      // The first bootstraps the cluster; the second then copies it.
      if (name === 'm1') await waitFor('m1 primary', async () => (await api(apiPort, '/primary')).status === 200, 120_000, 250)
    }
    const haPort = await freePort()
    writeFileSync(join(root, 'haproxy.cfg'), `global
  maxconn 1000
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 2s
listen postgres
  bind 127.0.0.1:${haPort}
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
${members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} check port ${m.apiPort}`).join('\n')}
`)
    const haproxy = startProcess('haproxy', ['-f', join(root, 'haproxy.cfg'), '-db'], { logFile: join(root, 'haproxy.log') })
    children.push(haproxy)
    await waitFor('HAProxy', async () => { if (exited(haproxy)) throw new GiveUp(`haproxy exited; see ${join(root, 'haproxy.log')}`); return portOpen(haPort) }, 30_000)
    const leader = async (): Promise<Member> => {
      for (const m of members) if ((await api(m.apiPort, '/primary').catch(() => ({ status: 0 }))).status === 200) return m
      throw new Error('no member answers GET /primary with 200')
    }
    const cluster: PatroniCluster = {
      members,
      url: (db) => `postgres://postgres@127.0.0.1:${haPort}/${db}`,
      leader,
      async promotedFrom (name, timeoutMs = 60_000) {
        let found: Member | undefined
        await waitFor(`a primary other than ${name}`, async () => {
          found = await leader()
          return found.name !== name
        }, timeoutMs, 200)
        return found!
      },
      async healthy (timeoutMs = 120_000) {
        await waitFor('a leader and its synchronous standby', async () => {
          const { body } = await api(members[0]!.apiPort, '/cluster')
          const roles = (body?.members ?? []).map((m: { role: string, state: string }) => `${m.role}:${m.state}`).sort()
          return roles.join(',') === 'leader:running,sync_standby:streaming' || roles.join(',') === 'leader:running,sync_standby:running'
        }, timeoutMs, 500)
      },
      async switchover () {
        const from = await leader()
        const to = members.find((m) => m !== from)!
        const r = spawnSync('patronictl', ['-c', join(root, `${from.name}.yml`), 'switchover', '--leader', from.name, '--candidate', to.name, '--force'], { encoding: 'utf8', uid, gid, cwd: root })
        if (r.status !== 0) throw new Error(`patronictl switchover failed: ${r.stdout}${r.stderr}`)
      },
      destroy,
    }
    await cluster.healthy()
    return cluster
  } catch (err) {
    await destroy()
    throw err
  }
}
