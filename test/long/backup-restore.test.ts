/**
 * Backup and restore as docs/operations.md tells an operator to do it
 * (docs/operations.md "Backup and restore"): records with encrypted fields, several versions and a delete are
 * written and a checkpoint published; `pg_dump -Fc` of the database,
 * `pg_restore` into a fresh database, the service started on it with the
 * same keys and checkpoint directory. Every record's `/verificar` is valid,
 * the data reads back as before, the auditor's script passes on the whole
 * restored database, and a new create gets the next id. A checkpoint
 * published after the dump (the old database went on) is reported against
 * the restored database until it is moved aside, as the guide says.
 *
 * PostgreSQL: a cluster of the test's own (the PostgreSQL binaries are on
 * every machine of this project), in both modes; and the development route:
 * a copy of the embedded data directory of a stopped service, started on.
 */
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadConfig } from '../../core/config.js'
import { buildApp } from '../../app.js'
import { TEST_KEY, testEnv } from '../helpers/app.js'
import { client, login, ok } from '../helpers/http.js'
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { flushPrefix, newRedisPrefix, testRedis, usingRedis } from '../helpers/services.js'

type Rec = Record<string, any>
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DENUNCIA = { denunciante_nombre: 'Ana Pérez', denunciante_dni: '12345678Z', denunciante_telefono: '600111222', tipo: 'robo', fecha_hechos: '2026-03-01 10:00:00', lugar_hechos: 'Calle Mayor 1', descripcion: 'Robo con fuerza' }
const seq = (id: string): number => Number(id.split('-')[2])
/** Each case starts the service two or three times (embedded: PGlite cold starts) on a shared 2-core machine. */
const SLOW = 240_000

/** A program's exit status and output (never throws). */
function run (cmd: string, args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number, out: string }> {
  return new Promise((resolve) => execFile(cmd, args, { cwd: ROOT, env: { ...process.env, ...env } }, (e, stdout, stderr) =>
    resolve({ code: e === null ? 0 : Number((e as { code?: number }).code ?? 1), out: stdout + stderr })))
}
async function mustRun (cmd: string, args: string[], env: Record<string, string | undefined> = {}): Promise<string> {
  const r = await run(cmd, args, env)
  expect(r.code, `${cmd} ${args.join(' ')}\n${r.out}`).toBe(0)
  return r.out
}

const dir = mkdtempSync(join(tmpdir(), 'backup-restore-'))
const redisPrefix = newRedisPrefix()
const apps: FastifyInstance[] = []
async function start (env: Record<string, string>, dataDir = join(dir, 'data')): Promise<FastifyInstance> {
  const app = await buildApp({ config: loadConfig(testEnv({ dataDir, redisPrefix }, { CHECKPOINT_DIR: join(dir, 'puntos-control'), ...env })), logger: false })
  apps.push(app)
  return app
}
async function stop (app: FastifyInstance): Promise<void> {
  apps.splice(apps.indexOf(app), 1)
  await app.close()
}
afterAll(async () => {
  for (const app of apps) await app.close()
  await flushPrefix(redisPrefix)
  rmSync(dir, { recursive: true, force: true })
})

/** As the guide says: every key of the service's Redis prefix but the id counters (`<prefix>seq:*`). */
async function dropCacheKeepCounters (): Promise<void> {
  if (!usingRedis) return
  const r = testRedis()
  try {
    const drop = (await r.keys(`${redisPrefix}*`)).filter((k) => !k.startsWith(`${redisPrefix}seq:`))
    if (drop.length > 0) await r.del(...drop)
  } finally { r.disconnect() }
}

/** Records with encrypted fields, several versions and a delete, then a checkpoint. Returns every record as read. */
async function write (app: FastifyInstance): Promise<Map<string, Rec>> {
  const api = client(app, await login(app))
  const a = ok(await api.post('/denuncias', DENUNCIA), 201)
  ok(await api.put(`/denuncias/${a._id as string}`, { lugar_hechos: 'Calle Mayor 3' }))
  ok(await api.put(`/denuncias/${a._id as string}`, { denunciante_telefono: '600333444' }))
  const b = ok(await api.post('/denuncias', { ...DENUNCIA, denunciante_dni: '87654321X' }), 201)
  ok(await api.del(`/denuncias/${b._id as string}`))
  const c = ok(await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Llamada', numero_llamada: '+34 600 000 000' }), 201)
  ok(await api.post('/auditoria/puntos-control'))
  // Written after the checkpoint: in the dump, sealed later by the restored service.
  ok(await api.put(`/sala092/${c._id as string}`, { descripcion: 'Llamada atendida' }))
  return read(app, [['denuncias', a._id], ['denuncias', b._id], ['sala092', c._id]])
}

/** Each record (deleted ones through `?eliminados`), its history and its verification. */
async function read (app: FastifyInstance, ids: Array<[string, string]>): Promise<Map<string, Rec>> {
  const api = client(app, await login(app))
  const out = new Map<string, Rec>()
  for (const [mod, id] of ids) {
    const history = ok(await api.get(`/${mod}/${id}/historial`))
    const live = await api.get(`/${mod}/${id}`)
    out.set(id, { mod, history, live: live.status === 200 ? live.body.data : null, verificar: ok(await api.get(`/${mod}/${id}/verificar`)) })
  }
  return out
}

function expectSame (restored: Map<string, Rec>, before: Map<string, Rec>): void {
  for (const [id, rec] of restored) {
    expect(rec.verificar, id).toMatchObject({ valido: true })
    expect(rec.live, id).toEqual(before.get(id)!.live)
    expect(rec.history, id).toEqual(before.get(id)!.history)
  }
  expect([...restored.values()].map((r) => r.live === null)).toEqual([false, true, false]) // the deleted one stays deleted
  expect(restored.get([...restored.keys()][0]!)!.live.denunciante_telefono).toBe('600333444') // decrypted
}

describe('PostgreSQL: pg_dump -Fc, pg_restore into a fresh database, start on it', () => {
  let cluster: PgCluster
  beforeAll(async () => { cluster = await startPgCluster() })
  afterAll(async () => { await cluster?.destroy() })

  it('every record verifies and reads back, the auditor passes, the next create gets the next id', async () => {
    await mustRun('psql', [cluster.url(), '-c', 'create database policia'])
    const source = await start({ DATABASE_URL: cluster.url('policia') })
    const before = await write(source)
    const dump = join(dir, 'policia.dump')
    await mustRun('pg_dump', ['-Fc', '-d', cluster.url('policia'), '-f', dump])
    // The old database goes on and publishes a checkpoint the backup does not reach.
    const api = client(source, await login(source))
    const lost = ok(await api.post('/denuncias', DENUNCIA), 201)
    const newer = ok(await api.post('/auditoria/puntos-control')).punto_control
    await stop(source)

    await mustRun('psql', [cluster.url(), '-c', 'create database policia_restaurada'])
    await mustRun('pg_restore', ['--no-owner', '-d', cluster.url('policia_restaurada'), dump])
    await dropCacheKeepCounters()
    const env = { DATABASE_URL: cluster.url('policia_restaurada') }
    let restored = await start(env)
    const [first] = (await read(restored, [...before].map(([id, r]) => [r.mod, id] as [string, string]))).values()
    expect(first!.verificar.valido, 'the newer checkpoint: the restored chain looks truncated').toBe(false)
    await stop(restored)

    // Checkpoints beyond the restored chain's head go aside (kept: they are evidence of what was lost).
    const head = Number((await mustRun('psql', [cluster.url('policia_restaurada'), '-tAc', 'select coalesce(max(seq), 0) from sys_cadena'])).trim())
    const aside = join(dir, 'puntos-control-posteriores')
    mkdirSync(aside)
    for (const f of readdirSync(join(dir, 'puntos-control'))) {
      if (JSON.parse(readFileSync(join(dir, 'puntos-control', f), 'utf8')).seq > head) renameSync(join(dir, 'puntos-control', f), join(aside, f))
    }
    expect(readdirSync(aside).map((f) => JSON.parse(readFileSync(join(aside, f), 'utf8')).seq)).toContain(newer.seq)

    restored = await start(env)
    const after = await read(restored, [...before].map(([id, r]) => [r.mod, id] as [string, string]))
    expectSame(after, before)

    const keyEnv = { ...testEnv({ dataDir: join(dir, 'data'), redisPrefix }, env), NODE_ENV: 'test' }
    const publicKey = (await mustRun(process.execPath, ['--import', 'tsx', 'bin/integrity-key.ts', '--publica'], keyEnv)).trim()
    const indexKey = (await mustRun(process.execPath, ['--import', 'tsx', 'bin/integrity-key.ts', '--indice'], keyEnv)).trim()
    const integrityKey = (await mustRun(process.execPath, ['--import', 'tsx', 'bin/integrity-key.ts'], keyEnv)).trim()
    // The command of docs/operations.md "Restore", step 5: with every key, every live row is recomputed.
    const audit = await run(process.execPath, ['deploy/auditoria/verificar-cadena.mjs', '--db', cluster.url('policia_restaurada'),
      '--puntos-control', join(dir, 'puntos-control'), '--clave-publica', publicKey, '--modulos', 'modules.yaml', '--clave-cifrado', TEST_KEY,
      '--clave-indice', indexKey, '--clave-integridad', integrityKey])
    expect(audit.code, audit.out).toBe(0)
    expect(audit.out).toContain('Database intact against its checkpoints.')
    expect(audit.out).toMatch(/^Live rows recomputed: [1-9]\d*\.$/m)

    // The record created after the dump is lost. Redis's counters, kept, go on past its id;
    // in-process counters died with the old process, and its number is drawn again.
    const next = ok(await client(restored, await login(restored)).post('/denuncias', DENUNCIA), 201)
    const stored = [...before.keys()].filter((id) => id.startsWith('DEN-')).map(seq)
    expect(seq(lost._id)).toBe(Math.max(...stored) + 1)
    expect(seq(next._id)).toBe(usingRedis ? seq(lost._id) + 1 : seq(lost._id))
    await stop(restored)
  }, SLOW)
})

describe('embedded: a copy of the stopped service\'s data directory', () => {
  it('starts on the copy: every record verifies and reads back, the next create gets the next id', async () => {
    const original = join(dir, 'embedded')
    // A deployment of its own: its checkpoints may not share the PostgreSQL one's directory (chain identity, docs/operator-guide.md "Tamper evidence: the global chain and checkpoints").
    const own = { CHECKPOINT_DIR: join(dir, 'puntos-control-embebido') }
    const source = await start(own, original)
    const before = await write(source)
    await stop(source)
    const copy = join(dir, 'embedded-copia')
    cpSync(original, copy, { recursive: true })
    rmSync(original, { recursive: true, force: true })
    const restored = await start(own, copy)
    expectSame(await read(restored, [...before].map(([id, r]) => [r.mod, id] as [string, string])), before)
    const next = ok(await client(restored, await login(restored)).post('/denuncias', DENUNCIA), 201)
    expect(seq(next._id)).toBe(Math.max(...[...before.keys()].filter((id) => id.startsWith('DEN-')).map(seq)) + 1)
    await stop(restored)
  }, SLOW)
})
