/**
 * docs/operator-guide.md "Tamper evidence: the global chain and checkpoints": a full checkpoint store is an outage of the store, not
 * tampering. CHECKPOINT_DIR is a 64 KiB tmpfs; a service process seals every
 * second. The volume is filled; records are written and read: every record
 * verifies, no empty or cut-short checkpoint file is left, the failed writes
 * are counted in /metrics, and `npm run checkpoint` (bin/checkpoint.ts as a
 * child process) exits non-zero saying the directory is full. Once space is
 * freed the service writes checkpoints again by itself, without a restart,
 * and `npm run checkpoint` and the auditor's script pass. Needs root (mount).
 */
import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadRegistry } from '../../core/registry/load.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { sampleBody } from '../helpers/http.js'
import { createInstance, type Instance, type InstanceEnv } from './helpers/instances.js'
import { waitFor } from './helpers/processes.js'
import { ADMIN, call, login } from './helpers/stack.js'
import { freePort } from '../helpers/free-port.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const registry = loadRegistry('modules.yaml')
const mod = (name: string): ModuleDef => registry.byName.get(name)!
const KEY = Buffer.alloc(32, 9).toString('base64')

function run (command: string, args: string[]): { status: number | null, out: string } {
  const r = spawnSync(command, args, { encoding: 'utf8' })
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error?.message ?? ''}` }
}

describe('a full checkpoint volume', () => {
  const dir = mkdtempSync(join(tmpdir(), 'faults-cp-'))
  const store = join(dir, 'puntos-control')
  let mounted = false
  let cluster: PgCluster | undefined
  let instance: Instance | undefined
  let env: InstanceEnv
  let metricsPort: number

  beforeAll(async () => {
    rmSync(store, { recursive: true, force: true })
    spawnSync('mkdir', ['-p', store])
    const m = run('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', store])
    if (m.status !== 0) {
      throw new Error(`this fault test mounts a 64 KiB tmpfs as CHECKPOINT_DIR and needs root (CAP_SYS_ADMIN): mount -t tmpfs failed (${m.status}): ${m.out.trim()}`)
    }
    mounted = true
    cluster = await startPgCluster()
    const admin = new pg.Client({ connectionString: cluster.url() })
    await admin.connect()
    await admin.query('create database policia')
    await admin.end()
    metricsPort = await freePort()
    // One instance: no Redis needed.
    env = {
      DATABASE_URL: cluster.url('policia'),
      DATA_DIR: join(dir, 'data'),
      JWT_SECRET: 'fault-test-secret-that-is-long-enough-for-hs256',
      ENCRYPTION_KEY: KEY,
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      CHECKPOINT_DIR: store,
      CHECKPOINT_INTERVAL: '1s',
    } as unknown as InstanceEnv
    instance = await createInstance('instance-1', dir, { ...env, METRICS_PORT: String(metricsPort) })
    await instance.start()
  })

  afterAll(async () => {
    await instance?.stop().catch(() => undefined)
    await cluster?.destroy().catch(() => undefined)
    if (mounted) {
      const u = run('umount', [store])
      if (u.status !== 0) console.error(`umount ${store} failed: ${u.out}`)
    }
    try { rmdirSync(store) } catch { /* not empty or gone */ }
    rmSync(dir, { recursive: true, force: true })
  })

  const files = (): string[] => readdirSync(store).filter((n) => n !== 'relleno')
  const failures = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    return Number(/^checkpoint_failures_total (\d+)/m.exec(text)?.[1] ?? NaN)
  }
  const head = async (): Promise<number> => {
    const c = new pg.Client({ connectionString: env.DATABASE_URL })
    await c.connect()
    try { return Number((await c.query('select coalesce(max(seq), 0)::int as n from sys_cadena')).rows[0].n) } finally { await c.end() }
  }
  const newestFileSeq = (): number => Math.max(0, ...files().filter((n) => n.startsWith('punto-')).map((n) => Number(n.slice(6, 18))))
  const checkpointCommand = (): Promise<{ code: number, out: string }> => new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bin/checkpoint.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TZ: 'Europe/Madrid', DATABASE_URL: env.DATABASE_URL, JWT_SECRET: env.JWT_SECRET!, ENCRYPTION_KEY: KEY, DATA_DIR: env.DATA_DIR, CHECKPOINT_DIR: store, LOG_LEVEL: 'silent' },
    }, (e, stdout, stderr) => { resolve({ code: e === null ? 0 : Number((e as { code?: number }).code ?? 1), out: stdout + stderr }) })
  })

  it('is an outage of the store: records verify, no partial file, failures counted, npm run checkpoint fails; freed, it recovers by itself', async () => {
    const base = instance!.url
    const token = await login(base)
    const refs = new Map<string, string>()
    const create = async (m: ModuleDef): Promise<string> => {
      const res = await call(base, 'POST', `/${m.path}`, { token, body: sampleBody(m, refs) })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      return res.body.data._id as string
    }
    refs.set('personal', await create(mod('personal')))
    const ids: Array<[ModuleDef, string]> = [[mod('personal'), refs.get('personal')!]]
    ids.push([mod('vehiculos'), await create(mod('vehiculos'))])
    await waitFor('a first checkpoint file', async () => newestFileSeq() >= await head() && await head() > 0, 60_000, 200)
    expect(await failures()).toBe(0)

    // Fill the volume: as much as it takes, then nothing more fits.
    const filler = join(store, 'relleno')
    let size = 64 * 1024
    for (;;) {
      try { writeFileSync(filler, Buffer.alloc(size)); break } catch { size -= 1024 }
      if (size <= 0) throw new Error('could not fill the tmpfs')
    }
    expect(() => { writeFileSync(join(store, 'otro'), Buffer.alloc(8192)) }).toThrow(/ENOSPC/)
    try { unlinkSync(join(store, 'otro')) } catch { /* never created */ }
    const before = newestFileSeq()

    for (const name of ['vehiculos', 'denuncias', 'vehiculos', 'denuncias']) ids.push([mod(name), await create(mod(name))])
    const edited = ids[1]!
    expect((await call(base, 'PUT', `/${edited[0].path}/${edited[1]}`, { token, body: { marca: 'Lleno' } })).status).toBe(200)
    await waitFor('checkpoint write failures counted in /metrics', async () => await failures() >= 2, 60_000, 250)
    await waitFor('every entry sealed (stored in the database)', async () => {
      const c = new pg.Client({ connectionString: env.DATABASE_URL })
      await c.connect()
      try { return (await c.query('select 1 from sys_historial h where not exists (select 1 from sys_cadena c where c.historial = h.id)')).rowCount === 0 } finally { await c.end() }
    }, 60_000, 250)
    expect(newestFileSeq()).toBe(before)

    for (const [m, id] of ids) {
      const res = await call(base, 'GET', `/${m.path}/${id}/verificar`, { token })
      expect({ id, status: res.status, body: res.body }).toEqual({ id, status: 200, body: { success: true, data: { valido: true } } })
    }
    // Nothing empty, cut short or temporary left behind.
    for (const n of files()) {
      expect(n, 'a temporary file left behind').toMatch(/^punto-\d{12}-\d{8}T\d{9}Z-[0-9a-f]{8}\.json$/)
      expect(() => JSON.parse(readFileSync(join(store, n), 'utf8')), `${n} is not a whole checkpoint`).not.toThrow()
    }
    const full = await checkpointCommand()
    expect(full.code, full.out).not.toBe(0)
    expect(full.out).toContain(`the checkpoint directory ${store} is full or not writable (ENOSPC`)
    expect(full.out).not.toMatch(/Checkpoint \d+ published/)

    // Space again: the next rounds write by themselves, no restart.
    unlinkSync(filler)
    const tip = await head()
    await waitFor('a checkpoint file of the current head, written by the service by itself', async () => newestFileSeq() >= tip, 30_000, 250)
    for (const [m, id] of ids) {
      const res = await call(base, 'GET', `/${m.path}/${id}/verificar`, { token })
      expect(res.body).toEqual({ success: true, data: { valido: true } })
    }
    const ok = await checkpointCommand()
    expect(ok.code, ok.out).toBe(0)
    expect(ok.out).toMatch(/Checkpoint \d+ published in /)
    console.log(`[faults] full checkpoint store: ${await failures()} failed writes counted; recovered at seq ${newestFileSeq()}`)
  })
})
