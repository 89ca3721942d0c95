/**
 * The checkpoint store and the auditor's script (docs/operator-guide.md "Tamper
 * evidence"): an unreadable checkpoint file is an outage of the store, not
 * a forgery, for /verificar and for the script; two databases pointed at
 * one CHECKPOINT_DIR are told apart by their chain's identity and the second
 * start refuses; a checkpoint written before identities is adopted when
 * this deployment's key signed it; old files are compacted; the script
 * recomputes every live row's hash (a field edited in SQL is named when
 * the history keeps the row before it) and
 * reads one snapshot, so running it during writes reports nothing false.
 */
import { execFile } from 'node:child_process'
import { createPrivateKey, sign } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { DETAILS, MOTIVOS } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import { createSigner, type Checkpoint } from '../../records/integrity/checkpoint-format.js'
import { createHarness, TEST_KEY, type Harness } from '../helpers/app.js'
import { client, login, ok, sampleBody, type Api } from '../helpers/http.js'
import { errorOf } from '../helpers/errors.js'
import { sealAll } from '../helpers/seal.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const registry = loadRegistry('modules.yaml')
const mod = (name: string): ModuleDef => registry.byName.get(name)!
const veh = mod('vehiculos'), den = mod('denuncias'), per = mod('personal')

let h: Harness, app: FastifyInstance, api: Api, token: string
let keys: Awaited<ReturnType<typeof loadSystemKeys>>
const refs = new Map<string, string>()
const sql = <T = Rec>(text: string, params: unknown[] = []): Promise<T[]> => h.db.query<T>(text, params)
const create = async (m: ModuleDef, extra: Rec = {}, a = api): Promise<Rec> => ok(await a.post(`/${m.path}`, { ...sampleBody(m, refs), ...extra }), 201)
const verificar = async (m: ModuleDef, id: string, a = api): Promise<Rec> => ok(await a.get(`/${m.path}/${id}/verificar`))
const checkpoint = async (): Promise<Rec> => ok(await api.post('/auditoria/puntos-control'))
const dir = (): string => h.config.checkpointDir
const fileName = (seq: number, at: Date, tag = 'abcdef01'): string => `punto-${String(seq).padStart(12, '0')}-${at.toISOString().replace(/[-:.]/g, '')}-${tag}.json`

const identity = async (): Promise<string> => (await sql<{ cadena: string }>('select cadena from sys_cadena_estado where id = 1'))[0]!.cadena
const dbUrl = (): string => h.db.url ?? `postgres://postgres:postgres@localhost/postgres?host=${encodeURIComponent(h.db.embedded!.host)}`
function auditor (over: Record<string, string> = {}): Promise<{ code: number, out: string, err: string }> {
  const opts: Record<string, string> = { '--modulos': 'modules.yaml', '--clave-cifrado': TEST_KEY, '--clave-indice': keys.indexKey.toString('base64'), '--clave-integridad': keys.integrityKey.toString('base64'), ...over }
  const argv = ['--db', dbUrl(), '--puntos-control', dir(), '--clave-publica', createSigner(keys.signingSeed).publicKey, ...Object.entries(opts).flat()]
  return new Promise((resolve) => execFile(process.execPath, ['deploy/auditoria/verificar-cadena.mjs', ...argv], { cwd: ROOT }, (e, stdout, stderr) =>
    resolve({ code: e === null ? 0 : Number((e as { code?: number }).code ?? 1), out: stdout + stderr, err: stderr })))
}
/** One of the admin commands (bin/), as an operator runs it. */
function command (name: string, env: Record<string, string>): Promise<{ code: number, out: string }> {
  return new Promise((resolve) => execFile(process.execPath, ['--import', 'tsx', `bin/${name}.ts`], {
    cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', METRICS_PORT: '0', TZ: 'Europe/Madrid', ...env },
  }, (e, stdout, stderr) => resolve({ code: e === null ? 0 : Number((e as { code?: number }).code ?? 1), out: stdout + stderr })))
}
async function expectAuditorOk (): Promise<void> {
  const r = await auditor()
  expect(r.code, r.out).toBe(0)
  expect(r.out).toContain('Database intact against its checkpoints.')
}

beforeAll(async () => {
  ({ h, app, token, admin: api } = await startTestApp())
  keys = await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)
  refs.set('personal', (await create(per))._id)
  refs.set('vehiculos', (await create(veh))._id)
  await sealAll(api, h.db)
})
afterAll(async () => { await h?.close() })

describe('an unreadable checkpoint file is an outage of the store, not tampering', () => {
  it.each([
    ['empty', ''],
    ['cut short', '{"formato":2,"cadena":"'],
    ['the wrong shape', '{"formato":2,"seq":"muchos"}\n'],
  ])('%s: /verificar still verifies (motivo ILEGIBLE), the script says which file (exit 2), never a forgery', async (_name, text) => {
    const v = await create(veh)
    await sealAll(api, h.db)
    const file = join(dir(), fileName(999_999_999_999, new Date()))
    writeFileSync(file, text)
    const other = await h.app()
    try {
      // read at start by a new instance, and every interval by a running one
      for (const a of [other, app]) {
        a.checkpoints.readDirectory()
        expect(await verificar(veh, v._id, client(a, token))).toEqual({ valido: true, motivo: MOTIVOS.ILEGIBLE })
      }
      const r = await auditor()
      expect(r.code, r.out).toBe(2)
      expect(r.err).toContain(file)
      expect(r.out).not.toMatch(/PROBLEM|forged|\n\s+at /)
    } finally {
      rmSync(file)
      await h.closeApp(other)
    }
    app.checkpoints.readDirectory()
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })
})

describe('a checkpoint store that cannot be written', () => {
  it('POST /auditoria/puntos-control answers 503 with why; records still verify; once writable, the next round writes by itself', async () => {
    const store = mkdtempSync(join(tmpdir(), 'cp-store-'))
    const own = await h.app({ env: { CHECKPOINT_DIR: store, CHECKPOINT_INTERVAL: '1s' } })
    const a = client(own, token)
    try {
      const v = await create(veh, {}, a)
      // The directory replaced by a plain file: every write fails (root ignores permissions, so not chmod).
      rmSync(store, { recursive: true })
      writeFileSync(store, 'no soy un directorio')
      const refused = await a.post('/auditoria/puntos-control')
      expect(refused.status).toBe(503)
      expect(refused.body).toEqual(errorOf('SERVICIO_NO_DISPONIBLE', [{ campo: 'punto_control', mensaje: DETAILS.PUNTO_CONTROL_NO_PUBLICADO }]))
      expect(own.checkpoints.failures).toBeGreaterThan(0)
      expect(await verificar(veh, v._id, a)).toEqual({ valido: true })
      rmSync(store)
      mkdirSync(store)
      const deadline = Date.now() + 30_000
      while (readdirSync(store).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
      expect(readdirSync(store).filter((n) => n.startsWith('punto-'))).not.toHaveLength(0)
      expect(await verificar(veh, v._id, a)).toEqual({ valido: true })
    } finally {
      await h.closeApp(own)
      rmSync(store, { recursive: true, force: true })
    }
  })
})

describe('chain identity', () => {
  it('every checkpoint names this database\'s chain', async () => {
    const cadena = await identity()
    expect(cadena).toMatch(/^[0-9a-f]{32}$/)
    expect((await checkpoint()).punto_control.cadena).toBe(cadena)
    expect(await sql('select 1 from sys_puntos_control where cadena is distinct from $1 and cadena is not null', [cadena])).toHaveLength(0)
  })

  it('two databases, one CHECKPOINT_DIR: the second start refuses with the fix; the other chain\'s files are never tampering', async () => {
    const ours = await identity()
    const h2 = await createHarness()
    try {
      const refused = h2.app({ env: { CHECKPOINT_DIR: dir() } })
      await expect(refused).rejects.toThrow(/CHECKPOINT_DIR .* holds checkpoints of another chain/)
      const message = await refused.catch((err: Error) => err.message)
      const theirs = (await h2.db.query<{ cadena: string }>('select cadena from sys_cadena_estado where id = 1'))[0]!.cadena
      expect(theirs).toMatch(/^[0-9a-f]{32}$/)
      expect(theirs).not.toBe(ours)
      expect(message).toContain(dir())
      expect(message).toContain(ours)
      expect(message).toContain(theirs)
      expect(message).toContain('set CHECKPOINT_DIR to a directory of this deployment\'s own')
      // npm run check refuses it too (it reads PostgreSQL; the embedded database is not checked)
      if (h2.db.url !== undefined) {
        const check = await command('check', { DATABASE_URL: h2.db.url, CHECKPOINT_DIR: dir(), DATA_DIR: h2.config.dataDir, JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789', ENCRYPTION_KEY: TEST_KEY })
        expect(check.code, check.out).toBe(1)
        expect(check.out).toContain(`CHECKPOINT_DIR ${dir()} holds checkpoints of another chain (${ours})`)
      }
      // The second database on its own store works, and its checkpoints copied here are left out, not reported.
      const app2 = await h2.app()
      const cp2 = ok(await client(app2, await login(app2)).post('/auditoria/puntos-control')).punto_control as Checkpoint
      const copy = join(dir(), fileName(cp2.seq, new Date(cp2.fecha), 'feedbeef'))
      writeFileSync(copy, JSON.stringify(cp2))
      try {
        const v = await create(veh)
        await sealAll(api, h.db)
        app.checkpoints.readDirectory()
        expect(app.checkpoints.problem()).toBeUndefined()
        expect(await verificar(veh, v._id)).toEqual({ valido: true })
        const r = await auditor()
        expect(r.code, r.out).toBe(0)
        expect(r.out).toContain(`Left out: ${copy} is a checkpoint of another chain (${theirs}`)
      } finally { rmSync(copy) }
    } finally { await h2.close() }
  })

  it('a checkpoint written before identities (format 1) is adopted when this key signed it; one it did not sign refuses the start', async () => {
    const signer = createSigner(keys.signingSeed)
    const [head] = await sql<{ seq: string, enlace: string }>('select seq::text as seq, enlace from sys_cadena order by seq desc limit 1')
    const legacy = (s: typeof signer): Checkpoint => {
      const cp = s.sign({ seq: Number(head!.seq), enlace: head!.enlace }, new Date().toISOString(), '0'.repeat(32))
      return s === signer ? legacyOf(cp, keys.signingSeed) : legacyOf(cp, Buffer.alloc(32, 9))
    }
    const file = join(dir(), fileName(Number(head!.seq), new Date(), 'aaaa0001'))
    writeFileSync(file, JSON.stringify(legacy(signer)))
    try {
      const adopted = await h.app()
      expect(adopted.checkpoints.problem()).toBeUndefined()
      await h.closeApp(adopted)
      await expectAuditorOk()
    } finally { rmSync(file) }
    writeFileSync(file, JSON.stringify(legacy(createSigner(Buffer.alloc(32, 9)))))
    try {
      await expect(h.app()).rejects.toThrow(/holds checkpoints of another chain \(written before chain identities, not signed by this deployment's key\)/)
    } finally { rmSync(file) }
  })
})

/** A format 1 checkpoint of the same head, signed with `seed` as versions before identities did. */
function legacyOf (cp: Checkpoint, seed: Buffer): Checkpoint {
  // Format 1 signs {cabeza, fecha, formato: 1, seq}; the signer only writes format 2, so sign by hand.
  const key = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' })
  const body = JSON.stringify({ cabeza: cp.cabeza, fecha: cp.fecha, formato: 1, seq: cp.seq })
  return { formato: 1, seq: cp.seq, cabeza: cp.cabeza, fecha: cp.fecha, firma: sign(null, Buffer.from(body), key).toString('base64') }
}

describe('compaction', () => {
  it('keeps every file of the last day, the newest of each hour up to 30 days, of each day up to a year, of each month before; never another chain\'s', async () => {
    const signer = createSigner(keys.signingSeed)
    const [head] = await sql<{ seq: string, enlace: string }>('select seq::text as seq, enlace from sys_cadena order by seq desc limit 1')
    const seq = Number(head!.seq)
    const now = Date.UTC(2030, 0, 31, 12, 0, 0)
    const at = (hoursAgo: number): Date => new Date(now - hoursAgo * 3_600_000)
    const put = (hoursAgo: number, tag: string, s = signer, cadena = app.checkpoints.cadena): string => {
      const when = at(hoursAgo)
      const name = fileName(seq, when, tag)
      writeFileSync(join(dir(), name), JSON.stringify(s.sign({ seq, enlace: head!.enlace }, when.toISOString(), cadena)))
      return name
    }
    const before = new Set(readdirSync(dir()))
    const recent = [put(1, '00000001'), put(2, '00000002')]
    const hourA = [put(50.1, '00000003'), put(50.2, '00000004')] // same hour, two days ago: the newer (50.1) stays
    const dayB = [put(24 * 40 + 1, '00000005'), put(24 * 40 + 3, '00000006')] // same day, 40 days ago: the newer stays
    const foreign = put(24 * 40 + 2, '00000007', createSigner(Buffer.alloc(32, 9)), 'f'.repeat(32))
    const monthC = [put(24 * 400, '00000008'), put(24 * 401, '00000009')] // same month, over a year ago: the newer stays
    const removed = app.checkpoints.compact(now)
    const left = new Set(readdirSync(dir()))
    try {
      for (const f of [...recent, hourA[0]!, dayB[0]!, monthC[0]!, foreign]) expect(left.has(f), f).toBe(true)
      for (const f of [hourA[1]!, dayB[1]!, monthC[1]!]) expect(left.has(f), f).toBe(false)
      expect(removed).toBeGreaterThanOrEqual(3)
    } finally {
      for (const f of left) if (!before.has(f)) rmSync(join(dir(), f))
    }
  })
})

describe('the auditor\'s script sees what /verificar sees', () => {
  // Updated once first: the fields are named from the row before the version (its entry's `anterior`) and what the version changed (`campos`).
  it.each([
    ['a plain field', veh, 'marca', { km_actuales: 9000 }, (): string => 'Editada'],
    ['an encrypted field (a valid ciphertext of another value)', den, 'denunciante_telefono', { lugar_hechos: 'Plaza Mayor' }, (id: string): string => app.cipher.encrypt('699999999', id, 'denunciante_telefono')],
  ])('%s edited in SQL in the live row, history untouched: reported naming record and field', async (_n, m, field, update, value) => {
    const r = await create(m)
    ok(await api.put(`/${m.path}/${r._id}`, update))
    await sealAll(api, h.db)
    const col = m.fieldMap.get(field)!.column
    const [orig] = await sql<{ x: string }>(`select "${col}" as x from "${m.table}" where "_id" = $1`, [r._id])
    await sql(`update "${m.table}" set "${col}" = $2 where "_id" = $1`, [r._id, value(r._id)])
    expect(await verificar(m, r._id)).toMatchObject({ valido: false })
    const out = await auditor()
    expect(out.code, out.out).toBe(1)
    expect(out.out).toMatch(new RegExp(`${r._id}: the live row's values do not give its _hash \\(version 2\\): field ${field} edited`))
    await sql(`update "${m.table}" set "${col}" = $2 where "_id" = $1`, [r._id, orig!.x])
    expect(await verificar(m, r._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a field edited in SQL in the live row of a record never updated: reported, without naming the field', async () => {
    // The live row is the only copy of a first version (docs/operator-guide.md "History and verification"): nothing to compare its values with.
    const r = await create(veh)
    await sealAll(api, h.db)
    const col = veh.fieldMap.get('marca')!.column
    const [orig] = await sql<{ x: string }>(`select "${col}" as x from "${veh.table}" where "_id" = $1`, [r._id])
    await sql(`update "${veh.table}" set "${col}" = 'Editada' where "_id" = $1`, [r._id])
    expect(await verificar(veh, r._id)).toMatchObject({ valido: false, version_rota: 1 })
    const out = await auditor()
    expect(out.code, out.out).toBe(1)
    expect(out.out).toMatch(new RegExp(`${r._id}: the live row's values do not give its _hash \\(version 1\\): edited behind the service's back`))
    await sql(`update "${veh.table}" set "${col}" = $2 where "_id" = $1`, [r._id, orig!.x])
    expect(await verificar(veh, r._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a live encrypted value that does not decrypt (copied from another record) is reported', async () => {
    const a = await create(den, { denunciante_telefono: '600111222' })
    const b = await create(den, { denunciante_telefono: '600333444' })
    await sealAll(api, h.db)
    const col = den.fieldMap.get('denunciante_telefono')!.column
    const [orig] = await sql<{ x: string }>(`select "${col}" as x from "${den.table}" where "_id" = $1`, [a._id])
    await sql(`update "${den.table}" set "${col}" = (select "${col}" from "${den.table}" where "_id" = $2) where "_id" = $1`, [a._id, b._id])
    const out = await auditor()
    expect(out.code, out.out).toBe(1)
    expect(out.out).toMatch(new RegExp(`${a._id}: denunciante_telefono does not decrypt`))
    await sql(`update "${den.table}" set "${col}" = $2 where "_id" = $1`, [a._id, orig!.x])
    await expectAuditorOk()
  })

  it('malformed inputs for the live-row check: a message and exit 2, never a stack trace', async () => {
    const badYaml = join(h.config.dataDir, 'modulos-rotos.yaml')
    writeFileSync(badYaml, 'modules:\n  vehiculos:\n    fields:\n      marca: 7\n')
    for (const [over, message] of [
      [{ '--clave-integridad': 'AAAA' }, '--clave-integridad must be 32 bytes'],
      [{ '--modulos': badYaml }, 'field marca of module vehiculos is not a field declaration'],
    ] as const) {
      const r = await auditor(over)
      expect(r.code, r.out).toBe(2)
      expect(r.err).toContain(message)
      expect(r.err).not.toMatch(/\n\s+at /)
    }
  })

  it('a module declared in --modulos whose table does not exist (never started) is no problem: the snapshot goes on', async () => {
    const file = join(h.config.dataDir, 'modulos-mas.yaml')
    writeFileSync(file, readFileSync('modules.yaml', 'utf8').replace('\nmodules:\n', '\nmodules:\n  fantasmas:\n    prefix: FAN\n    label: Fantasmas\n    fields:\n      dni: { type: string, encrypted: true, searchable: true }\n'))
    const r = await auditor({ '--modulos': file })
    expect(r.code, r.out).toBe(0)
    expect(r.out).toMatch(/Live rows recomputed: [1-9]/)
  })

  it('run while records are created and updated through HTTP: no problem reported', async () => {
    const timed = await h.app({ env: { CHECKPOINT_INTERVAL: '1s' } })
    const writer = client(timed, token)
    let stop = false
    let writes = 0
    // Three writers, each creating a record and updating it again and again: without one snapshot the
    // script would read a record's history and then its live row a version later.
    const loop = async (w: number): Promise<void> => {
      const m = w % 2 === 0 ? veh : den
      let r = await create(m, {}, writer)
      for (let i = 0; !stop && i < 600; i++) {
        if (i % 20 === 19) r = await create(m, {}, writer)
        ok(await writer.put(`/${m.path}/${r._id}`, m === veh ? { marca: `M${w}-${i}` } : { lugar_hechos: `Calle ${w}-${i}` }))
        writes++
      }
    }
    const loops = Promise.all([0, 1, 2].map(loop))
    try {
      for (let run = 0; run < 4; run++) {
        const r = await auditor()
        expect(r.code, r.out).toBe(0)
        expect(r.out).toMatch(/Live rows recomputed: [1-9]/)
      }
    } finally {
      stop = true
      await loops
      await h.closeApp(timed)
    }
    expect(writes).toBeGreaterThan(0)
  }, 240_000)
})
