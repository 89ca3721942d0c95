/**
 * Tamper evidence beyond one record's chain (docs/operator-guide.md "Tamper evidence: the global chain and checkpoints"):
 * the global chain over every history entry and its signed checkpoints.
 * Each tampering made in SQL behind the service's back — a record rolled
 * back (plain, encrypted, a deletion undone), the newest versions of the
 * whole history truncated, a blind index copied from another record, a
 * history row's author, time or changed fields edited, a version's stored
 * row edited or deleted where the next entry keeps it (`anterior`) — is found by
 * /verificar and by the auditor's script run on the database against the
 * checkpoints; undone, both pass again. An untampered database passes both,
 * records written before the first checkpoint and during sealing included.
 * Also: historial/verificar of a deleted record need `eliminar`, and changed
 * encrypted fields are named only to callers who may decrypt them.
 */
import { execFile } from 'node:child_process'
import { readdirSync, statSync, writeFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { MOTIVOS } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import { TEST_KEY, type Harness } from '../helpers/app.js'
import { client, ok, sampleBody, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { usingPostgres } from '../helpers/services.js'
import { insertFromJson } from '../helpers/row-json.js'
import { sealAll } from '../helpers/seal.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const registry = loadRegistry('modules.yaml')
const mod = (name: string): ModuleDef => registry.byName.get(name)!
const veh = mod('vehiculos'), per = mod('personal'), den = mod('denuncias')

let h: Harness, app: FastifyInstance, api: Api, token: string, publicKey: string, indexKey: string, integrityKey: string
const refs = new Map<string, string>()

const create = async (m: ModuleDef, extra: Rec = {}): Promise<Rec> => ok(await api.post(`/${m.path}`, { ...sampleBody(m, refs), ...extra }), 201)
const put = async (m: ModuleDef, id: string, body: Rec): Promise<Rec> => ok(await api.put(`/${m.path}/${id}`, body))
const verificar = async (m: ModuleDef, id: string, a = api): Promise<Rec> => ok(await a.get(`/${m.path}/${id}/verificar`))
const checkpoint = async (): Promise<Rec> => ok(await api.post('/auditoria/puntos-control'))
const sql = <T = Rec>(text: string, params: unknown[] = []): Promise<T[]> => h.db.query<T>(text, params)

const dbUrl = (): string => h.db.url ?? `postgres://postgres:postgres@localhost/postgres?host=${encodeURIComponent(h.db.embedded!.host)}`
/** The auditor's script on the whole database, against CHECKPOINT_DIR. */
function auditor (extra: string[] = [], args?: string[]): Promise<{ code: number, out: string, err: string }> {
  const argv = args ?? ['--db', dbUrl(), '--puntos-control', h.config.checkpointDir, '--clave-publica', publicKey, '--modulos', 'modules.yaml', '--clave-cifrado', TEST_KEY, '--clave-indice', indexKey, '--clave-integridad', integrityKey, ...extra]
  return new Promise((resolve) => execFile(process.execPath, ['deploy/auditoria/verificar-cadena.mjs', ...argv], { cwd: ROOT }, (e, stdout, stderr) =>
    resolve({ code: e === null ? 0 : Number((e as { code?: number }).code ?? 1), out: stdout + stderr, err: stderr })))
}
async function expectAuditorOk (): Promise<void> {
  const r = await auditor()
  expect(r.code, r.out).toBe(0)
  expect(r.out).toContain('Database intact against its checkpoints.')
}
async function expectAuditorFinds (pattern: RegExp): Promise<void> {
  const r = await auditor()
  expect(r.code, r.out).toBe(1)
  expect(r.out).toMatch(pattern)
  expect(r.out).toContain('The database is NOT intact')
}
const broken = (motivo: keyof typeof MOTIVOS, version?: number): Rec => ({ valido: false, ...(version !== undefined && { version_rota: version }), motivo: MOTIVOS[motivo] })

/** Rows of a table, to put back exactly as they were. */
async function saveRows (table: string, where: string, params: unknown[]): Promise<Rec[]> {
  return sql(`select to_jsonb(t) as j from "${table}" t where ${where}`, params).then((rows) => rows.map((r) => r.j))
}
async function putBack (table: string, rows: Rec[]): Promise<void> {
  for (const r of rows) await insertFromJson(sql, table, '$1::jsonb', [JSON.stringify(r)])
}
/**
 * Rolls a record back in SQL: deletes its history from `version` on and copies version `version - 1` into the live row.
 * That version's stored row is its entry's `datos` (older entries) or the `anterior` of the entry after it (docs/operator-guide.md "History and verification").
 */
async function rollBack (m: ModuleDef, id: string, version: number): Promise<() => Promise<void>> {
  const live = await saveRows(m.table, '"_id" = $1', [id])
  const history = await saveRows('sys_historial', 'registro = $1 and version >= $2', [id, version])
  const [older] = await sql<{ j: Rec | null }>(`select coalesce(p.datos, n.anterior) as j from sys_historial p
    left join sys_historial n on n.modulo = p.modulo and n.registro = p.registro and n.version = p.version + 1
    where p.registro = $1 and p.version = $2`, [id, version - 1])
  expect(older?.j, `the row of ${id} v${version - 1}`).toBeTruthy()
  await sql('delete from sys_historial where registro = $1 and version >= $2', [id, version])
  await sql(`delete from "${m.table}" where "_id" = $1`, [id])
  await insertFromJson(sql, m.table, '$1::jsonb', [JSON.stringify(older!.j)])
  return async () => {
    await sql(`delete from "${m.table}" where "_id" = $1`, [id])
    await putBack(m.table, live)
    await putBack('sys_historial', history)
  }
}

beforeAll(async () => {
  // No periodic round on the file's main instance: one landing while 'a forged checkpoint' has its
  // forged row in the table would see it, and an instance keeps a forgery it saw until it ends
  // (records/integrity/checkpoints.ts), failing every later /verificar here. Rounds are asked for.
  ({ h, app, token, admin: api } = await startTestApp({ env: { CHECKPOINT_INTERVAL: '24h' } }))
  const keys = await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)
  indexKey = keys.indexKey.toString('base64')
  integrityKey = keys.integrityKey.toString('base64')
  refs.set('personal', (await create(per))._id)
  refs.set('vehiculos', (await create(veh))._id)
})
afterAll(async () => { await h.close() })

describe('an untampered database', () => {
  it('passes /verificar and the auditor, for records written before the first checkpoint and while sealing', async () => {
    const before = [await create(veh), await create(den), await create(per)]
    const first = await sealAll(api, h.db)
    publicKey = first.clave_publica
    expect(first.punto_control).toMatchObject({ formato: 2, cadena: expect.stringMatching(/^[0-9a-f]{32}$/), seq: expect.any(Number), cabeza: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(first.sellados).toBeGreaterThan(0)
    // writes and checkpoints at once: nothing sealed twice, nothing left out
    const writes = Array.from({ length: 12 }, async (_, i) => {
      const r = await create(i % 2 === 0 ? veh : den)
      await put(i % 2 === 0 ? veh : den, r._id, i % 2 === 0 ? { marca: `M${i}` } : { denunciante_telefono: `6000000${i}` })
      return [i % 2 === 0 ? veh : den, r] as const
    })
    const [done] = await Promise.all([Promise.all(writes), checkpoint(), checkpoint(), checkpoint()])
    const last = await sealAll(api, h.db)
    const chain = (await sql<{ n: number }>('select count(*)::int as n from sys_cadena'))[0]!.n
    const history = (await sql<{ n: number }>('select count(*)::int as n from sys_historial'))[0]!.n
    expect(chain).toBe(history)
    expect(last.punto_control.seq).toBe(chain)
    for (const r of before) expect(await verificar(registry.modules.find((m) => r._id.startsWith(m.prefix))!, r._id)).toEqual({ valido: true })
    for (const [m, r] of done) expect(await verificar(m, r._id)).toEqual({ valido: true })
    await expectAuditorOk()
  }, 120_000)

  it('publishes each checkpoint as a new read-only file, never overwritten', async () => {
    const dir = h.config.checkpointDir
    const files = (): string[] => readdirSync(dir).filter((n) => n.startsWith('punto-'))
    const n = files().length
    const a = await checkpoint(), b = await checkpoint()
    expect(files().length).toBe(n + 2)
    expect(b.punto_control.seq).toBe(a.punto_control.seq)
    for (const f of files()) expect(statSync(join(dir, f)).mode & 0o222).toBe(0)
  })

  it('seals by itself every CHECKPOINT_INTERVAL', async () => {
    const dir = h.config.checkpointDir
    const timed = await h.app({ env: { CHECKPOINT_INTERVAL: '1s' } })
    try {
      const r = await create(veh)
      const [row] = await sql<{ id: string }>('select id::text as id from sys_historial where registro = $1', [r._id])
      for (let i = 0; i < 300; i++) {
        if ((await sql('select 1 from sys_cadena where historial = $1', [row!.id])).length > 0) break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(await sql('select 1 from sys_cadena where historial = $1', [row!.id])).toHaveLength(1)
      expect(readdirSync(dir).length).toBeGreaterThan(0)
    } finally { await h.closeApp(timed) }
  }, 90_000)

  // PGlite runs one backend session for every connection, so no transaction
  // of the embedded database can be running beside the sealer's.
  if (usingPostgres) it('never seals past a transaction still running: its rows are sealed once it ends', async () => {
    const pg = (await import('pg')).default
    const other = new pg.Client({ connectionString: h.db.url })
    await other.connect()
    try {
      await other.query('begin')
      await other.query('select pg_current_xact_id()') // an id older than the writes below
      const r = await create(veh)
      await checkpoint()
      expect(await sql('select 1 from sys_cadena where registro = $1', [r._id])).toHaveLength(0)
      await other.query('commit')
      await sealAll(api, h.db)
      expect(await sql('select 1 from sys_cadena where registro = $1', [r._id])).toHaveLength(1)
      expect(await verificar(veh, r._id)).toEqual({ valido: true })
    } finally { await other.end() }
  })
})

describe('tampering in SQL, found by /verificar and by the auditor against the checkpoints', () => {
  it('a plain record rolled back (newest history rows deleted, an older version copied into the live row)', async () => {
    const v = await create(veh, { marca: 'Seat' })
    await put(veh, v._id, { marca: 'Renault' })
    await put(veh, v._id, { km_actuales: 9000 })
    await sealAll(api, h.db)
    const undo = await rollBack(veh, v._id, 3)
    expect(ok(await api.get(`/${veh.path}/${v._id}`))._version).toBe(2)
    expect(await verificar(veh, v._id)).toEqual(broken('RETROCESO', 3))
    await expectAuditorFinds(new RegExp(`${v._id}: version 3, sealed in entry \\d+, is missing from the history`))
    await undo()
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('an encrypted record rolled back', async () => {
    const d = await create(den, { denunciante_dni: '11111111H' })
    await put(den, d._id, { denunciante_dni: '22222222J', denunciante_telefono: '611222333' })
    await sealAll(api, h.db)
    const undo = await rollBack(den, d._id, 2)
    expect(await verificar(den, d._id)).toEqual(broken('RETROCESO', 2))
    await expectAuditorFinds(new RegExp(`${d._id}: version 2, sealed in entry \\d+, is missing from the history`))
    await undo()
    expect(await verificar(den, d._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a deletion undone', async () => {
    const p = await create(per)
    ok(await api.del(`/${per.path}/${p._id}`))
    await sealAll(api, h.db)
    const undo = await rollBack(per, p._id, 2)
    expect(ok(await api.get(`/${per.path}/${p._id}`))._deleted).toBeNull()
    expect(await verificar(per, p._id)).toEqual(broken('RETROCESO', 2))
    await expectAuditorFinds(new RegExp(`${p._id}: version 2, sealed in entry \\d+, is missing from the history`))
    await undo()
    expect(await verificar(per, p._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a blind index copied from another record', async () => {
    const a = await create(den, { denunciante_dni: '33333333P' })
    const b = await create(den, { denunciante_dni: '44444444A' })
    const col = `${den.fieldMap.get('denunciante_dni')!.column}_bidx`
    const [orig] = await sql<{ x: string }>(`select "${col}" as x from "${den.table}" where "_id" = $1`, [a._id])
    await sql(`update "${den.table}" set "${col}" = (select "${col}" from "${den.table}" where "_id" = $2) where "_id" = $1`, [a._id, b._id])
    // the harm: a search for b's DNI now also finds a
    expect(ok(await api.get(`/${den.path}?denunciante_dni=44444444A`)).records.map((r: Rec) => r._id).sort()).toEqual([a._id, b._id].sort())
    expect(await verificar(den, a._id)).toEqual(broken('INDICE_CIEGO', 1))
    await expectAuditorFinds(new RegExp(`${a._id}: the blind index of denunciante_dni does not match its value`))
    await sql(`update "${den.table}" set "${col}" = $2 where "_id" = $1`, [a._id, orig!.x])
    expect(await verificar(den, a._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it.each([
    ['usuario', `'USR-2026-99999'`, /the author or time|is not the one sealed/],
    ['fecha', `fecha - interval '1 hour'`, /the author or time|is not the one sealed/],
    ['campos', `'["marca","modelo"]'::jsonb`, /v2: the history row \(author, time, action, fields or hash\) is not the one sealed/],
  ])('a history row\'s %s edited', async (col, edit, found) => {
    const v = await create(veh)
    await put(veh, v._id, { marca: 'Otra' })
    await sealAll(api, h.db)
    const [orig] = await sql<{ x: unknown }>(`select ${col} as x from sys_historial where registro = $1 and version = 2`, [v._id])
    await sql(`update sys_historial set ${col} = ${edit} where registro = $1 and version = 2`, [v._id])
    expect(await verificar(veh, v._id)).toMatchObject({ valido: false, version_rota: 2 })
    await expectAuditorFinds(found)
    await sql(`update sys_historial set ${col} = $2${col === 'campos' ? '::jsonb' : ''} where registro = $1 and version = 2`, [v._id, col === 'campos' ? JSON.stringify(orig!.x) : orig!.x])
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it.each([
    ['its author edited', `jsonb_set(anterior, '{_modified_by}', '"USR-2026-99999"')`, 'the author or time of the history row are not those of its version'],
    ['deleted', 'null', 'the stored row of this version is nowhere'],
  ])('a version\'s stored row, kept in the next entry\'s `anterior`, %s', async (_n, edit, found) => {
    const v = await create(veh)
    await put(veh, v._id, { marca: 'Antes' })
    await put(veh, v._id, { marca: 'Despues' })
    await sealAll(api, h.db)
    const [orig] = await sql<{ x: Rec }>('select anterior as x from sys_historial where registro = $1 and version = 3', [v._id])
    expect(orig!.x).toMatchObject({ _version: 2, marca: 'Antes' })
    await sql(`update sys_historial set anterior = ${edit} where registro = $1 and version = 3`, [v._id])
    expect(await verificar(veh, v._id)).toEqual(broken('VERSION', 2))
    await expectAuditorFinds(new RegExp(`${v._id} v2: ${found}`))
    await sql('update sys_historial set anterior = $2::jsonb where registro = $1 and version = 3', [v._id, JSON.stringify(orig!.x)])
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a history begun by an older release (each entry its own row in `datos`) and continued by this one: passes; an author edited in `datos` is found', async () => {
    const v = await create(veh)
    await put(veh, v._id, { marca: 'Vieja' })
    await put(veh, v._id, { marca: 'Nueva' })
    // versions 1 and 2 as an older release wrote them: each its own row, no `anterior`; version 3 written by this one
    await sql(`update sys_historial h set datos = n.anterior from sys_historial n
      where h.registro = $1 and h.version in (1, 2) and n.registro = h.registro and n.version = h.version + 1`, [v._id])
    await sql('update sys_historial set anterior = null where registro = $1 and version = 2', [v._id])
    await sealAll(api, h.db)
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
    await sql(`update sys_historial set datos = jsonb_set(datos, '{_modified_by}', '"USR-2026-99999"') where registro = $1 and version = 1`, [v._id])
    expect(await verificar(veh, v._id)).toEqual(broken('VERSION', 1))
    await expectAuditorFinds(new RegExp(`${v._id} v1: the author or time of the history row are not those of its version`))
    await sql(`update sys_historial set datos = jsonb_set(datos, '{_modified_by}', to_jsonb(usuario)) where registro = $1 and version = 1`, [v._id])
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a version written in SQL with a back-dated transaction id, so that it is never sealed', async () => {
    // stands for a version forged consistently (hash recomputed) and inserted with an old xid
    const v = await create(veh)
    await sealAll(api, h.db)
    await put(veh, v._id, { marca: 'Forjada' })
    await sql(`update sys_historial set xid = '1'::xid8 where registro = $1 and version = 2`, [v._id])
    await checkpoint()
    expect(await sql('select 1 from sys_cadena where registro = $1 and version = 2', [v._id])).toHaveLength(0)
    expect(await verificar(veh, v._id)).toEqual(broken('FUERA', 2))
    await expectAuditorFinds(new RegExp(`${v._id} v2: out of the chain`))
    // sealed after all (as if its transaction id were genuine): both pass
    await sql(`update sys_historial set xid = pg_current_xact_id() where registro = $1 and version = 2`, [v._id])
    await sealAll(api, h.db)
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a record rolled back together with its entries in the chain (a gap)', async () => {
    const v = await create(veh)
    await put(veh, v._id, { marca: 'Gap' })
    await create(veh)
    await sealAll(api, h.db)
    const entries = await saveRows('sys_cadena', 'registro = $1 and version = 2', [v._id])
    const undo = await rollBack(veh, v._id, 2)
    await sql('delete from sys_cadena where registro = $1 and version = 2', [v._id])
    expect(await verificar(veh, v._id)).toEqual(broken('ENLACE', 1))
    await expectAuditorFinds(/the chain lacks entries/)
    await undo()
    await putBack('sys_cadena', entries)
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('the newest versions of the whole history deleted (tail truncation), also after a restart', async () => {
    const old = await create(veh)
    const r = await create(den)
    const c1 = (await sealAll(api, h.db)).punto_control.seq as number
    await put(den, r._id, { lugar_hechos: 'Plaza Mayor' })
    const fresh = await create(veh)
    await sealAll(api, h.db)
    // everything sealed after c1 goes: chain, history, stored checkpoints, and the records as they were at c1
    const chain = await saveRows('sys_cadena', 'seq > $1', [c1])
    const history = await saveRows('sys_historial', 'id in (select historial from sys_cadena where seq > $1)', [c1])
    const stored = await saveRows('sys_puntos_control', 'seq > $1', [c1])
    const undoRecord = await rollBack(den, r._id, 2)
    const freshRow = await saveRows(veh.table, '"_id" = $1', [fresh._id])
    await sql('delete from sys_historial where id in (select historial from sys_cadena where seq > $1)', [c1])
    await sql('delete from sys_cadena where seq > $1', [c1])
    await sql('delete from sys_puntos_control where seq > $1', [c1])
    await sql(`delete from "${veh.table}" where "_id" = $1`, [fresh._id])
    expect(await verificar(veh, old._id)).toEqual(broken('TRUNCADA'))
    expect(await verificar(den, r._id)).toEqual(broken('TRUNCADA'))
    await expectAuditorFinds(/chain truncated/)
    // nothing is signed over the truncated chain
    const refused = await checkpoint()
    expect(refused).toMatchObject({ punto_control: null, motivo: MOTIVOS.TRUNCADA })
    // a new instance learns the newest checkpoint from CHECKPOINT_DIR
    const restarted = await h.app()
    expect(await verificar(veh, old._id, client(restarted, token))).toEqual(broken('TRUNCADA'))
    await h.closeApp(restarted)
    await sql('delete from sys_historial where registro = $1 and version >= 2', [r._id])
    await undoRecord()
    await putBack(veh.table, freshRow)
    await putBack('sys_historial', history.filter((x) => x.registro !== r._id || x.version < 2))
    await putBack('sys_cadena', chain)
    await putBack('sys_puntos_control', stored)
    expect(await verificar(veh, old._id)).toEqual({ valido: true })
    expect(await verificar(den, r._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })

  it('a chain entry rewritten with consistent links up to the tip: the signed head no longer matches', async () => {
    const v = await create(veh)
    await sealAll(api, h.db)
    const [entry] = await sql<{ seq: string }>('select seq::text as seq from sys_cadena where registro = $1', [v._id])
    const rows = await saveRows('sys_cadena', 'seq >= $1', [entry!.seq])
    await sql(`update sys_cadena set entrada = repeat('a', 64) where seq = $1`, [entry!.seq])
    // recompute every later link so that the chain itself is consistent
    let prev = (await sql<{ enlace: string }>('select enlace from sys_cadena where seq = $1', [Number(entry!.seq) - 1]))[0]?.enlace ?? '0'.repeat(64)
    for (const r of await sql<{ seq: string, entrada: string }>('select seq::text as seq, entrada from sys_cadena where seq >= $1 order by seq', [entry!.seq])) {
      prev = (await import('node:crypto')).createHash('sha256').update(prev + r.entrada).digest('hex')
      await sql('update sys_cadena set enlace = $2 where seq = $1', [r.seq, prev])
    }
    expect(await verificar(veh, v._id)).toEqual(broken('REESCRITA'))
    expect(await verificar(veh, refs.get('vehiculos')!)).toEqual(broken('REESCRITA'))
    await expectAuditorFinds(/chain rewritten: link \d+ is not the head/)
    await sql('delete from sys_cadena where seq >= $1', [entry!.seq])
    await putBack('sys_cadena', rows)
    expect(await verificar(veh, v._id)).toEqual({ valido: true })
    await expectAuditorOk()
  })
})

describe('the auditor\'s script on bad input: a message and exit 2, never a stack trace', () => {
  it.each([
    ['no arguments', []],
    ['no checkpoints directory', ['--db', 'postgres://x@127.0.0.1:1/x', '--clave-publica', 'AAAA']],
    ['an unknown option', ['--nada']],
  ])('%s', async (_n, args) => {
    const r = await auditor([], args)
    expect(r.code, r.out).toBe(2)
    expect(r.err).not.toMatch(/\n\s+at /)
  })

  it('a public key of the wrong size, a file that is not a checkpoint, a database that does not answer', async () => {
    const bad = await auditor(['--clave-publica', 'AAAA'])
    expect([bad.code, bad.err]).toEqual([2, expect.stringContaining('--clave-publica')])
    const down = await auditor([], ['--db', 'postgres://postgres@127.0.0.1:1/x', '--puntos-control', h.config.checkpointDir, '--clave-publica', publicKey])
    expect([down.code, down.err]).toEqual([2, expect.stringContaining('could not read the database')])
    const file = join(h.config.checkpointDir, 'punto-zz-roto.json')
    writeFileSync(file, '{no es json')
    try {
      const r = await auditor()
      expect(r.code, r.out).toBe(2)
      expect(r.err).toContain('is not valid JSON')
      expect(r.err).not.toMatch(/\n\s+at /)
    } finally { rmSync(file) }
  })
})

describe('a forged checkpoint', () => {
  it('in the database: /verificar and the auditor report it', async () => {
    const v = await create(veh)
    await sealAll(api, h.db)
    const other = await h.app()
    try {
      await sql(`insert into sys_puntos_control (seq, cabeza, fecha, firma) select seq, cabeza, fecha, 'AAAA' from sys_puntos_control order by seq desc limit 1`)
      expect(await verificar(veh, v._id, client(other, token))).toEqual(broken('FIRMA'))
      await expectAuditorFinds(/the signature is not by the given public key/)
    } finally {
      await sql(`delete from sys_puntos_control where firma = 'AAAA'`)
      await h.closeApp(other)
    }
    await expectAuditorOk()
  })
})

describe('historial and verificar of a deleted record', () => {
  let consulta: string, jefe: string, administrador: string
  beforeAll(async () => {
    consulta = (await newUser(app, token, 'consulta')).token
    jefe = (await newUser(app, token, 'jefe')).token
    administrador = (await newUser(app, token, 'administrador')).token
  })

  it('need eliminar: others get 404 as for GET', async () => {
    const d = await create(den)
    ok(await api.del(`/${den.path}/${d._id}`))
    for (const t of [consulta, jefe]) {
      for (const path of ['', '/historial', '/verificar']) expectError(await client(app, t).get(`/${den.path}/${d._id}${path}`), 'REGISTRO_NO_ENCONTRADO')
    }
    const admin = client(app, administrador)
    expect(ok(await admin.get(`/${den.path}/${d._id}/historial`)).versiones.map((v: Rec) => v.accion)).toEqual(['crear', 'eliminar'])
    expect(await verificar(den, d._id, admin)).toEqual({ valido: true })
    // restored, it is everyone's again
    ok(await api.post(`/${den.path}/${d._id}/restaurar`))
    expect(ok(await client(app, consulta).get(`/${den.path}/${d._id}/historial`)).versiones).toHaveLength(3)
  })

  it('name changed encrypted fields only to callers who may decrypt them', async () => {
    const d = await create(den, { denunciante_dni: '55555555K' })
    await put(den, d._id, { denunciante_telefono: '699000111', lugar_hechos: 'Calle Real' })
    const campos = async (t: string): Promise<string[][]> => ok(await client(app, t).get(`/${den.path}/${d._id}/historial`)).versiones.map((v: Rec) => [...v.campos].sort())
    const encrypted = den.fields.filter((f) => f.encrypted).map((f) => f.name)
    const all = await campos(jefe)
    expect(all[1]).toEqual(['denunciante_telefono', 'lugar_hechos'])
    expect(all[0]).toEqual(expect.arrayContaining(['denunciante_dni']))
    const masked = await campos(consulta)
    expect(masked[1]).toEqual(['lugar_hechos'])
    expect(masked[0]).toEqual(all[0]!.filter((c) => !encrypted.includes(c)))
  })
})
