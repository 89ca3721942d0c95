/**
 * One blind-index key per module and field (docs/user-guide.md "Encryption"):
 * the same DNI in denuncias.denunciante_dni and sanciones.infractor_dni has
 * unrelated stored indexes; a database whose indexes were written under the
 * old single key (written here in SQL, as the old code computed them) is
 * rebuilt by the upgrade — `npm run migrate` against PostgreSQL, with
 * progress; the start in embedded mode — after which searches find every
 * record, /verificar and the auditor's script hold, and no `_hash` changed.
 */
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { normaliseSearchable } from '../../core/crypto.js'
import { MOTIVOS } from '../../core/errors.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import { rotateKeys } from '../../bin/rotate-keys.js'
import { createHarness, TEST_KEY, type Harness } from '../helpers/app.js'
import { client, login, ok, type Api } from '../helpers/http.js'
import { sealAll } from '../helpers/seal.js'

type Rec = Record<string, any>
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DNI = '71234567W'
const SECRETS = { JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789', ENCRYPTION_KEY: TEST_KEY }

let h: Harness, app: FastifyInstance, api: Api, indexKey: Buffer, publicKey: string
const sql = <T = Rec>(text: string, params: unknown[] = []): Promise<T[]> => h.db.query<T>(text, params)
const dbUrl = (): string => h.db.url ?? `postgres://postgres:postgres@localhost/postgres?host=${encodeURIComponent(h.db.embedded!.host)}`

async function start (): Promise<void> {
  app = await h.app()
  api = client(app, await login(app))
}

const denuncia = async (set: Rec = {}): Promise<Rec> => ok(await api.post('/denuncias', {
  denunciante_nombre: 'Nombre Apellido', tipo: 'otro', fecha_hechos: '2026-03-15 10:30:00', lugar_hechos: 'Sin datos', descripcion: 'Sin datos', ...set,
}), 201)
const sancion = async (set: Rec = {}): Promise<Rec> => ok(await api.post('/sanciones', {
  tipo: 'trafico', infractor_nombre: 'Nombre Apellido', fecha_infraccion: '2026-03-15 10:30:00', lugar_infraccion: 'Sin datos', importe: 100, ...set,
}), 201)
const bidx = async (table: string, col: string, id: string): Promise<string | null> => (await sql(`select "${col}_bidx" as b from "${table}" where "_id" = $1`, [id]))[0]!.b
/** The index the code before per-field blind-index keys stored: one key for every field. */
const oldIndex = (v: string): string => createHmac('sha256', indexKey).update(normaliseSearchable(v), 'utf8').digest('hex')
const found = async (path: string, qs: string): Promise<string[]> => (ok(await api.get(`/${path}?${qs}`)).records as Rec[]).map((r) => r._id as string).sort()

/** Every `_hash`, live and in the history. */
async function hashes (): Promise<Rec[]> {
  return sql(`select 'denuncias' as t, "_id" as id, "_version"::text as v, "_hash" as h from denuncias
    union all select 'sanciones', "_id", "_version"::text, "_hash" from sanciones
    union all select 'personal', "_id", "_version"::text, "_hash" from personal
    union all select 'historial', registro, version::text, hash from sys_historial order by 1, 2, 3`)
}

function run (file: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number, out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(file.endsWith('.ts') ? ['--import', 'tsx'] : []), file, ...args], {
      cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', METRICS_PORT: '0', TZ: 'Europe/Madrid', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => { out += String(d) })
    child.stderr.on('data', (d: Buffer) => { out += String(d) })
    child.once('error', reject)
    child.once('close', (code) => { resolve({ code: code ?? 1, out }) })
  })
}

const auditor = async (): Promise<{ code: number, out: string }> => run('deploy/auditoria/verificar-cadena.mjs', ['--db', dbUrl(), '--puntos-control', h.config.checkpointDir,
  '--clave-publica', publicKey, '--modulos', 'modules.yaml', '--clave-cifrado', TEST_KEY, '--clave-indice', indexKey.toString('base64')])

beforeAll(async () => {
  h = await createHarness()
  await start()
  indexKey = (await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)).indexKey
  publicKey = ok(await api.post('/auditoria/puntos-control')).clave_publica
})
afterAll(async () => { await h.close() })

describe('one blind-index key per field', () => {
  it('the same DNI in two fields of two modules has unrelated stored indexes, and each search finds its own record', async () => {
    const d = await denuncia({ denunciante_dni: DNI })
    const s = await sancion({ infractor_dni: DNI })
    const [a, b] = [await bidx('denuncias', 'denunciante_dni', d._id), await bidx('sanciones', 'infractor_dni', s._id)]
    expect(a).toMatch(/^[0-9a-f]{64}$/)
    expect(b).toMatch(/^[0-9a-f]{64}$/)
    expect(a).not.toBe(b)
    expect([a, b]).not.toContain(oldIndex(DNI))
    expect(await found('denuncias', `denunciante_dni=${DNI}`)).toEqual([d._id])
    expect(await found('sanciones', `infractor_dni=${DNI}`)).toEqual([s._id])
  })
})

describe('the upgrade from one index key for every field', () => {
  it('rebuilds every stored index (tables and history) once, with progress; searches find, /verificar holds, no _hash changes', { timeout: 180_000 }, async () => {
    const d = await denuncia({ denunciante_dni: '52345678R' })
    ok(await api.put(`/denuncias/${d._id}`, { observaciones: 'segunda versión' }))
    const s = await sancion({ infractor_dni: '52345678R' })
    const p = ok(await api.post('/personal', { tip: 'TIP-UPG', nif: '62345678S', nombre: 'Ana', apellidos: 'Pérez', escala: 'oficial' }), 201)
    const cases = [['denuncias', 'denunciante_dni', d._id, '52345678R'], ['sanciones', 'infractor_dni', s._id, '52345678R'], ['personal', 'nif', p._id, '62345678S']] as const

    // The database as the code before per-field blind-index keys left it: every index under the one key, no scheme row.
    await h.closeApp(app)
    for (const table of ['denuncias', 'sanciones', 'personal']) {
      const col = cases.find((c) => c[0] === table)![1]
      const rows = await sql(`select "_id" as id from "${table}" where "${col}_bidx" is not null`)
      for (const { id } of rows) {
        const plain = table === 'personal' && id !== p._id ? undefined : cases.find((c) => c[2] === id)?.[3] ?? DNI
        if (plain === undefined) continue
        await sql(`update "${table}" set "${col}_bidx" = $1 where "_id" = $2`, [oldIndex(plain), id])
        // Every stored row of the history: an entry's own (`datos`, older entries) and the version before it (`anterior`).
        for (const c of ['datos', 'anterior']) await sql(`update sys_historial set ${c} = jsonb_set(${c}, $1::text[], to_jsonb($2::text)) where registro = $3 and ${c} ? $4`, [`{${col}_bidx}`, oldIndex(plain), id, `${col}_bidx`])
      }
    }
    await sql("delete from sys_claves where nombre = 'esquema_indice'")
    const before = await hashes()
    expect(await bidx('denuncias', 'denunciante_dni', d._id)).toBe(await bidx('sanciones', 'infractor_dni', s._id)) // linkable, as before

    if (h.db.url !== undefined) {
      const r = await run('bin/migrate.ts', [], { DATA_DIR: h.config.dataDir, ...SECRETS, DATABASE_URL: h.db.url })
      expect(r.code, r.out).toBe(0)
      expect(r.out).toMatch(/ {2}blind indexes of denuncias: (\d+)\/\1 rows, [1-9]\d* rewritten\n/)
      expect(r.out).toMatch(/ {2}blind indexes of sys_historial: (\d+)\/\1 rows, [1-9]\d* rewritten\n/)
      expect(r.out).toMatch(/Blind indexes rebuilt with one key per field\.\n$/)
      expect((await run('bin/migrate.ts', [], { DATA_DIR: h.config.dataDir, ...SECRETS, DATABASE_URL: h.db.url })).out).toMatch(/Blind indexes already use one key per field\.\n$/)
    }
    await start() // embedded: the start rebuilds them

    expect(await hashes()).toEqual(before)
    for (const [table, col, id, plain] of cases) {
      const path = table
      expect(await found(path, `${col}=${plain}`), `${table}.${col}`).toContain(id)
      expect(await bidx(table, col, id)).not.toBe(oldIndex(plain))
      // The history's stored rows (docs/decisions.md "Each version stored once"): the denuncia's version 1 is in its entry 2's `anterior`; the others' only version is their live row.
      const history = await sql<{ b: string }>('select x->>$2 as b from sys_historial, lateral (values (datos), (anterior)) as s(x) where registro = $1 and x is not null', [id, `${col}_bidx`])
      expect(history.length, id).toBe(id === d._id ? 1 : 0)
      for (const v of history) expect(v.b).toBe(await bidx(table, col, id))
      expect(ok(await api.get(`/${path}/${id}/verificar`)), id).toEqual({ valido: true })
    }
    expect(await bidx('denuncias', 'denunciante_dni', d._id)).not.toBe(await bidx('sanciones', 'infractor_dni', s._id))
    expect(await sql("select nombre from sys_claves where nombre = 'esquema_indice'")).toHaveLength(1)
    // The unique NIF still holds through the rebuilt index.
    expect((await api.post('/personal', { tip: 'TIP-UPG2', nif: '62345678s', nombre: 'Otra', apellidos: 'Más', escala: 'oficial' })).status).toBe(409)
  })

  it('rotate-keys --reindexar rebuilds old-scheme indexes too and records the scheme, so the next start has nothing to do', { timeout: 180_000 }, async () => {
    const d = await denuncia({ denunciante_dni: '92345678B' })
    await h.closeApp(app)
    await sql('update denuncias set denunciante_dni_bidx = $1 where "_id" = $2', [oldIndex('92345678B'), d._id])
    await sql("delete from sys_claves where nombre = 'esquema_indice'")
    const env = {
      ...(h.db.url !== undefined && { DATABASE_URL: h.db.url }), JWT_SECRET: h.config.jwtSecret, ENCRYPTION_KEY: TEST_KEY,
      DATA_DIR: h.config.dataDir, MODULES_FILE: h.config.modulesFile, TZ: h.config.timeZone, LOG_LEVEL: 'silent',
    }
    const report = await rotateKeys({ batchSize: 200, newIndexKey: false, reindex: true, quiet: true, env, ...(h.db.embedded !== undefined && { embedded: h.db.embedded }) })
    expect(report.modules.denuncias!.rewritten).toBe(1)
    expect(await sql("select nombre from sys_claves where nombre = 'esquema_indice'")).toHaveLength(1)
    await start()
    expect(await found('denuncias', 'denunciante_dni=92345678B')).toEqual([d._id])
    expect(ok(await api.get(`/denuncias/${d._id}/verificar`))).toEqual({ valido: true })
  })

  it("the auditor's script accepts the rebuilt indexes; an index copied from the same DNI in another module is caught by it and by /verificar", { timeout: 180_000 }, async () => {
    await sealAll(api, h.db)
    const good = await auditor()
    expect(good.code, good.out).toBe(0)
    expect(good.out).toMatch(/Blind indexes checked: [1-9]\d*\./)
    const d = await denuncia({ denunciante_dni: '82345678C' })
    const s = await sancion({ infractor_dni: '82345678C' })
    const own = await bidx('sanciones', 'infractor_dni', s._id)
    await sql('update sanciones set infractor_dni_bidx = (select denunciante_dni_bidx from denuncias where "_id" = $1) where "_id" = $2', [d._id, s._id])
    expect(ok(await api.get(`/sanciones/${s._id}/verificar`))).toEqual({ valido: false, version_rota: 1, motivo: MOTIVOS.INDICE_CIEGO })
    await sealAll(api, h.db)
    const bad = await auditor()
    expect(bad.code, bad.out).toBe(1)
    expect(bad.out).toContain(`${s._id}: the blind index of infractor_dni does not match its value`)
    await sql('update sanciones set infractor_dni_bidx = $1 where "_id" = $2', [own, s._id])
    expect(ok(await api.get(`/sanciones/${s._id}/verificar`))).toEqual({ valido: true })
  })
})

