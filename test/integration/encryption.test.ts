/**
 * Field encryption end to end (docs/user-guide.md "Encryption",
 * docs/operator-guide.md "Key rotation"),
 * through HTTP and the database, for every module of modules.yaml with
 * encrypted fields: no plaintext in any table, the stored format, masking per
 * role, blind-index search and uniqueness, the system keys, and key rotation
 * over a few thousand rows (`rotateKeys` on PostgreSQL; on the embedded
 * database, which it cannot reach by DATA_DIR, the same steps via `rotateModule`).
 */
import { createHmac, randomBytes, randomInt } from 'node:crypto'
import { redisEnv } from '../helpers/services.js'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { keyId } from '../../core/config.js'
import { createFieldCipher, fieldIndexKey, normaliseSearchable } from '../../core/crypto.js'
import { compileAccess } from '../../core/access.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { Action, FieldDef, ModuleDef } from '../../core/registry/types.js'
import { rotateKeys, type RotateReport } from '../../bin/rotate-keys.js'
import { blindIndexColumn, valueColumn } from '../../db/columns.js'
import { hasEncryptedFields, rotateModule } from '../../records/integrity/key-rotation.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import type { ServiceConnection } from '../../db/driver.js'
import { TEST_KEY, type Harness } from '../helpers/app.js'
import { client, login, sampleBody, validDni, withheldNames, type Res, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>

const registry = loadRegistry('modules.yaml')
// Whole (unscoped) permissions; row-level scope has its own tests (scope.test.ts).
const access = compileAccess(registry)
const perms = { can: (role: string, module: string, action: Action): boolean => access.scope(role, module, action) === 'all' }
const encMods = registry.modules.filter(hasEncryptedFields)
const enc = (m: ModuleDef): FieldDef[] => m.fields.filter((f) => f.encrypted)
const mod = (name: string): ModuleDef => registry.byName.get(name)!
/** [module, field] for every encrypted field matching `pred`. */
const fieldsWhere = (pred: (f: FieldDef) => boolean): Array<readonly [ModuleDef, FieldDef]> => encMods.flatMap((m) => enc(m).filter(pred).map((f) => [m, f] as const))
const [KEY_A, KEY_B, KEY_C] = [TEST_KEY, randomBytes(32).toString('base64'), randomBytes(32).toString('base64')]
const kid = (k: string): string => keyId(Buffer.from(k, 'base64'))
const STORED = /^v1:([0-9a-f]{8}):[A-Za-z0-9+/]{16}:[A-Za-z0-9+/]+={0,2}$/
const kidOf = (v: string): string | undefined => STORED.exec(v)?.[1]
const unwrap = (key: string, nombre: string, valor: string): Buffer => Buffer.from(createFieldCipher([Buffer.from(key, 'base64')],
  { indexKey: Buffer.alloc(32), integrityKey: Buffer.alloc(32) }).decrypt(valor, 'sys_claves', nombre), 'base64')
/** A blind index as docs/user-guide.md "Encryption" documents it: HMAC under the field's own key, derived from the index key. */
const hmac = (key: Buffer, m: string, f: string, v: string): string => createHmac('sha256', fieldIndexKey(key, m, f)).update(normaliseSearchable(v)).digest('hex')
const qs = (k: string, v: string): string => `?${k}=${encodeURIComponent(v)}`

let h: Harness
let admin: Api
const roles = new Map<string, Api>()
/** Every plaintext leaf written to an encrypted field (scanned for in the database). */
const written: string[] = []
/** One record per module with every encrypted field set, and its current plaintexts. */
const first = new Map<string, { id: string, secrets: Rec }>()
/** One record per searchable field, found again after the blind-index key changes. */
const found: Array<{ m: ModuleDef, f: FieldDef, value: string, id: string }> = []

let seq = 0
function secretFor (f: FieldDef): unknown {
  const t = `${(++seq).toString(36)}q${randomBytes(4).toString('hex')}`
  if (f.type === 'date') return `19${randomInt(10, 90)}-0${randomInt(1, 10)}-1${randomInt(0, 10)}`
  if (f.format === 'dni') return validDni(30_000_000 + seq * 100 + randomInt(0, 100))
  if (f.type === 'array') return [{ nombre: `Ñandú ${t}`, dni: `DNI${t}`, datos: { domicilio: `Calle ${t}` } }, `libre ${t}`]
  return `S${t}`.slice(0, f.maxLength ?? 500)
}
const leaves = (v: unknown): string[] => typeof v === 'string' ? [v] : v !== null && typeof v === 'object' ? Object.values(v).flatMap(leaves) : []
function secretsFor (m: ModuleDef): Rec {
  const secrets = Object.fromEntries(enc(m).map((f) => [f.name, secretFor(f)]))
  written.push(...leaves(secrets))
  return secretsFor.last = secrets
}
secretsFor.last = {} as Rec
const bodyFor = (m: ModuleDef): Rec => ({ ...sampleBody(m, new Map()), ...secretsFor(m) })
const created = async (api: Api, path: string, body: Rec): Promise<Rec> =>
  api.post(path, body).then((res) => { expect(res.status, JSON.stringify(res.body)).toBe(201); return res.body.data })
/** What a role is shown: plaintext without `_restringidos`, or every encrypted field withheld and named. */
function expectView (m: ModuleDef, rec: Rec, decrypt: boolean, secrets: Rec, ctx: string): void {
  const names = enc(m).map((f) => f.name)
  if (decrypt) {
    expect(rec, ctx).not.toHaveProperty('_restringidos')
    for (const n of names) expect(rec, ctx).toHaveProperty([n], n in secrets ? secrets[n] : rec[n])
  } else {
    for (const n of names) expect(rec, ctx).not.toHaveProperty(n)
    expect([...rec._restringidos].sort(), ctx).toEqual(withheldNames(m).sort())
    for (const leaf of leaves(secrets)) expect(JSON.stringify(rec), ctx).not.toContain(leaf)
  }
}
const stored = async (m: ModuleDef, id: string): Promise<Rec> => (await h.db.query(`select * from "${m.table}" where "_id" = $1`, [id]))[0]!
const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await h.db.query<{ n: string }>(sql, params))[0]!.n)
const perModule = async <T>(fn: (m: ModuleDef) => Promise<T>): Promise<Record<string, T>> =>
  Object.fromEntries(await Promise.all(encMods.map(async (m) => [m.name, await fn(m)] as const)))
/** Rows per module holding a value under another key than `id`. */
const staleCounts = (id: string): Promise<Record<string, number>> => perModule((m) => count(`select count(*) as n from "${m.table}" where ${
  enc(m).map((f) => `("${valueColumn(f)}" is not null and split_part("${valueColumn(f)}", ':', 2) <> $1)`).join(' or ')}`, [id]))
const zeros = Object.fromEntries(encMods.map((m) => [m.name, 0]))
/** `_id`, `_version`, `_modified`, `_hash` of every row, straight from the tables. */
const systemColumns = (): Promise<Record<string, Rec[]>> => perModule((m) => h.db.query(`select "_id", "_version", "_modified", "_hash" from "${m.table}" order by "_id"`))
/** Every record of every encrypted module as `api` sees it, in `_id` order. */
const snapshot = (api: Api): Promise<Record<string, Rec[]>> => perModule(async (m) => {
  const out: Rec[] = []
  for (let offset = 0; ; offset += 1000) {
    const res = await api.get(`/${m.path}?sort=_id&limit=1000&offset=${offset}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    out.push(...res.body.data.records)
    if (res.body.data.records.length < 1000) return out
  }
})
/** Every table of the database (from information_schema) → all its rows as text, lower case. */
async function dump (): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const { t } of await h.db.query<{ t: string }>("select table_name as t from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'")) {
    out[t] = (await h.db.query<{ r: string }>(`select t::text as r from "${t}" t`)).map((x) => x.r).join('\n').toLowerCase()
  }
  return out
}
const sysKeys = async (): Promise<Record<string, string>> =>
  Object.fromEntries((await h.db.query<{ nombre: string, valor: string }>('select "nombre", "valor" from "sys_claves"')).map((r) => [r.nombre, r.valor]))
/** Runs `fn` on a further instance with extra env, closed afterwards (embedded PGlite serves 16 connections). */
async function withInstance<T> (env: Record<string, string>, fn: (api: Api) => Promise<T>): Promise<T> {
  const a = await h.app({ env })
  try { return await fn(client(a, await login(a))) } finally { await a.close() }
}

/** The environment `npm run rotate-keys` runs with beside the harness's instances. */
const toolEnv = (current: string, old?: string): Record<string, string | undefined> => ({
  ...(h.db.url !== undefined && { DATABASE_URL: h.db.url }), ...redisEnv(),
  REDIS_PREFIX: h.redisPrefix, JWT_SECRET: h.config.jwtSecret, ENCRYPTION_KEY: current, ...(old !== undefined && { ENCRYPTION_KEYS: old }),
  DATA_DIR: h.config.dataDir, MODULES_FILE: h.config.modulesFile, TZ: h.config.timeZone, LOG_LEVEL: 'silent',
})
/** rotateKeys itself, on the harness's database (PostgreSQL by URL, embedded PGlite by handle). */
async function rotate (env: Record<string, string | undefined>, newIndexKey: boolean): Promise<RotateReport> {
  return rotateKeys({ batchSize: 200, newIndexKey, quiet: true, env, ...(h.db.embedded !== undefined && { embedded: h.db.embedded }) })
}
/** Rows rewritten per module table (the history, reported as sys_historial, is checked on its own). */
const rewritten = (r: RotateReport): Record<string, number> => Object.fromEntries(Object.entries(r.modules).filter(([k]) => k !== 'sys_historial').map(([k, v]) => [k, v.rewritten]))

beforeAll(async () => {
  const t = await startTestApp()
  h = t.h
  admin = t.admin
  for (const r of registry.roles) roles.set(r.name, client(t.app, (await newUser(t.app, t.token, r.name)).token))
})
afterAll(async () => { await h.close() })

describe('storage', () => {
  it('every encrypted field round-trips and is stored as v1:<key id>:<iv>:<ct> under ENCRYPTION_KEY', async () => {
    expect(encMods.map((m) => m.name).sort()).toEqual(['atestados', 'denuncias', 'personal', 'sala092', 'sanciones'])
    for (const m of encMods) {
      const rec = await created(admin, `/${m.path}`, bodyFor(m))
      const secrets = secretsFor.last
      first.set(m.name, { id: rec._id, secrets })
      expectView(m, rec, true, secrets, `POST ${m.name}`)
      expectView(m, (await admin.get(`/${m.path}/${rec._id}`)).body.data, true, secrets, `GET ${m.name}`)
      const row = await stored(m, rec._id)
      for (const f of enc(m)) {
        expect(kidOf(row[valueColumn(f)]), `${m.name}.${f.name}: ${row[valueColumn(f)]}`).toBe(kid(KEY_A))
        if (f.searchable) expect(row[blindIndexColumn(f)]).toMatch(/^[0-9a-f]{64}$/)
      }
    }
  })

  it('the same plaintext written twice gives different ciphertexts (and the same blind index)', async () => {
    for (const m of encMods) {
      const { id, secrets } = first.get(m.name)!
      const again = { ...bodyFor(m), ...secrets, ...Object.fromEntries(enc(m).filter((f) => f.unique).map((f) => [f.name, secretFor(f)])) }
      const [a, b] = [await stored(m, id), await stored(m, (await created(admin, `/${m.path}`, again))._id)]
      expect((await admin.put(`/${m.path}/${id}`, secrets)).status).toBe(200)
      const a2 = await stored(m, id)
      for (const f of enc(m)) {
        const [c, i] = [valueColumn(f), blindIndexColumn(f)]
        expect(a2[c], `${m.name}.${f.name} rewritten`).not.toBe(a[c])
        if (f.searchable) expect(a2[i]).toBe(a[i])
        if (!f.unique) expect(b[c], `${m.name}.${f.name} twin`).not.toBe(a[c])
        if (!f.unique && f.searchable) expect(b[i]).toBe(a[i])
      }
    }
  })

  it('a ciphertext copied to another record does not decrypt there: 500, never another record\'s data', async () => {
    const other = await created(admin, '/personal', bodyFor(mod('personal')))
    await h.db.query('update "personal" set "contacto_telefono" = (select "contacto_telefono" from "personal" where "_id" = $1) where "_id" = $2', [first.get('personal')!.id, other._id])
    expectError(await admin.get(`/personal/${other._id}`), 'ERROR_INTERNO')
    await h.db.query('delete from "personal" where "_id" = $1', [other._id])
  })
})

describe('masking per role', () => {
  it.each(encMods.map((m) => [m.name, m] as const))('%s: plaintext with descifrar, else withheld and named in _restringidos', async (_n, m) => {
    const id = first.get(m.name)!.id
    for (const r of registry.roles.filter((x) => perms.can(x.name, m.name, 'ver'))) {
      const [api, dec, secrets] = [roles.get(r.name)!, perms.can(r.name, m.name, 'descifrar'), first.get(m.name)!.secrets]
      const got = await api.get(`/${m.path}/${id}`)
      expect(got.status).toBe(200)
      expectView(m, got.body.data, dec, secrets, `${r.name} GET`)
      const listed = (await api.get(`/${m.path}?_id=${id}`)).body.data
      expect(listed.total).toBe(1)
      expectView(m, listed.records[0], dec, secrets, `${r.name} list`)
      for (const rec of (await api.get(`/${m.path}?limit=20`)).body.data.records) expectView(m, rec, dec, {}, `${r.name} list`)
      if (perms.can(r.name, m.name, 'crear')) {
        const rec = await created(api, `/${m.path}`, bodyFor(m))
        const made = secretsFor.last
        // What a caller creates is their own: `descifrar:propios` reaches it.
        expectView(m, rec, access.scope(r.name, m.name, 'descifrar') !== 'none', made, `${r.name} POST`)
        expectView(m, (await admin.get(`/${m.path}/${rec._id}`)).body.data, true, made, `${r.name} wrote`)
      }
      if (perms.can(r.name, m.name, 'editar')) {
        const next = secretsFor(m)
        const res = await api.put(`/${m.path}/${id}`, next)
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        expectView(m, res.body.data, dec, next, `${r.name} PUT`)
        expectView(m, (await admin.get(`/${m.path}/${id}`)).body.data, true, next, `${r.name} put`)
        first.set(m.name, { id, secrets: next })
      }
    }
  })

  it('an agente records a complainant\'s DNI (201) and reads it on its own record (descifrar:propios); an oficial and a consulta, who see it, never read it; a jefe reads what was written (format dni: trimmed, upper case)', async () => {
    const agente = roles.get('agente')!
    const dni = ' 44556677l '
    written.push(dni)
    const rec = await created(agente, '/denuncias', { ...bodyFor(mod('denuncias')), denunciante_dni: dni })
    expect(rec.denunciante_dni).toBe('44556677L')
    expect((await agente.get(`/denuncias/${rec._id}`)).body.data.denunciante_dni).toBe('44556677L')
    for (const other of ['oficial', 'consulta']) {
      const seen = (await roles.get(other)!.get(`/denuncias/${rec._id}`)).body.data
      expect(seen, other).not.toHaveProperty('denunciante_dni')
      expect(seen._restringidos, other).toContain('denunciante_dni')
    }
    expect((await roles.get('jefe')!.get(`/denuncias/${rec._id}`)).body.data.denunciante_dni).toBe('44556677L')
  })
})

describe('blind index', () => {
  it('searchable fields match the normalised value (trim, upper case), exact match only; 403 without descifrar', async () => {
    for (const [m, f] of fieldsWhere((x) => x.searchable)) {
      const core = validDni(randomInt(10_000_000, 99_999_999))
      const value = `  ${core.toLowerCase()} `
      written.push(core.toLowerCase())
      const rec = await created(admin, `/${m.path}`, { ...bodyFor(m), [f.name]: value })
      found.push({ m, f, value, id: rec._id })
      for (const q of [core, core.toLowerCase(), ` ${core}  `]) {
        const res = (await admin.get(`/${m.path}${qs(f.name, q)}`)).body.data
        expect(res.total, `${m.name}.${f.name}=${q}`).toBe(1)
        expect(res.records[0]).toMatchObject({ _id: rec._id, [f.name]: core }) // stored as format dni folds it
      }
      expect((await admin.get(`/${m.path}${qs(`${f.name}[in]`, `${core.toLowerCase()},00000000T`)}`)).body.data.total).toBe(1)
      for (const q of [core.slice(0, -1), core.slice(1), `${core}0`]) expect((await admin.get(`/${m.path}${qs(f.name, q)}`)).body.data.total, q).toBe(0)
      expectError(await admin.get(`/${m.path}${qs(`${f.name}[contiene]`, core)}`), 'DATOS_INVALIDOS')
      for (const r of registry.roles.filter((x) => perms.can(x.name, m.name, 'ver') && access.scope(x.name, m.name, 'descifrar') === 'none')) {
        expectError(await roles.get(r.name)!.get(`/${m.path}${qs(f.name, core)}`), 'SIN_PERMISOS')
      }
    }
    expect(found.map((x) => x.f.name).sort()).toEqual(['denunciante_dni', 'infractor_dni', 'nif'])
  })

  it('filtering on a non-searchable encrypted field, or sorting on any, is 400', async () => {
    expectError(await admin.get('/denuncias?denunciante_telefono=600000000'), 'DATOS_INVALIDOS')
    for (const [m, f] of fieldsWhere(() => true)) {
      if (!f.searchable) expectError(await admin.get(`/${m.path}${qs(f.name, 'x')}`), 'DATOS_INVALIDOS')
      expectError(await admin.get(`/${m.path}?sort=${f.name}`), 'DATOS_INVALIDOS')
    }
  })

  it('unique encrypted fields are unique through the blind index, on POST, PUT and concurrent POSTs (409)', async () => {
    for (const [m, f] of fieldsWhere((x) => x.unique)) {
      const core = validDni(randomInt(10_000_000, 99_999_999))
      const a = await created(admin, `/${m.path}`, { ...bodyFor(m), [f.name]: core })
      expectError(await admin.post(`/${m.path}`, { ...bodyFor(m), [f.name]: ` ${core.toLowerCase()} ` }), 'REGISTRO_DUPLICADO')
      const b = await created(admin, `/${m.path}`, bodyFor(m))
      expectError(await admin.put(`/${m.path}/${b._id}`, { [f.name]: core.toLowerCase() }), 'REGISTRO_DUPLICADO')
      expect((await admin.put(`/${m.path}/${a._id}`, { [f.name]: ` ${core.toLowerCase()}` })).status).toBe(200)
      const race = validDni(randomInt(10_000_000, 99_999_999))
      written.push(core.toLowerCase(), race.toLowerCase())
      const all = await Promise.all([0, 1, 2, 3, 4].map(() => admin.post(`/${m.path}`, { ...bodyFor(m), [f.name]: race })))
      expect(all.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409])
    }
  })

  it('no plaintext of an encrypted field appears in any table of the database', async () => {
    const tables = await dump()
    expect(Object.keys(tables)).toEqual(expect.arrayContaining(['sys_sesiones', 'sys_claves', ...registry.modules.map((m) => m.table)]))
    expect(written.length).toBeGreaterThan(50)
    for (const p of written) expect(Object.keys(tables).filter((t) => tables[t]!.includes(p.toLowerCase())), p).toEqual([])
  })
})

describe('system keys', () => {
  it('sys_claves holds indice and integridad wrapped by ENCRYPTION_KEY, never the raw key; blind indexes use indice', async () => {
    const keys = await sysKeys()
    // esquema_indice: the blind-index scheme in force (2: one key per field), wrapped alike.
    expect(Object.keys(keys).sort()).toEqual(['esquema_indice', 'firma', 'indice', 'integridad'])
    for (const [nombre, valor] of Object.entries(keys)) {
      expect(kidOf(valor), nombre).toBe(kid(KEY_A))
      const raw = unwrap(KEY_A, nombre, valor)
      expect(raw).toHaveLength(nombre === 'esquema_indice' ? 1 : 32)
      if (nombre !== 'esquema_indice') for (const form of [raw.toString('base64'), raw.toString('hex')]) expect(valor).not.toContain(form)
    }
    const { id, secrets } = first.get('personal')!
    expect((await stored(mod('personal'), id)).nif_bidx).toBe(hmac(unwrap(KEY_A, 'indice', keys.indice!), 'personal', 'nif', secrets.nif))
  })

  it('a second instance over the same database gets the same keys: it finds by blind index what the first wrote', async () => {
    const { id, secrets } = first.get('personal')!
    const res = (await withInstance({}, (other) => other.get(`/personal${qs('nif', secrets.nif)}`))).body.data
    expect(res.records).toEqual([(await admin.get(`/personal/${id}`)).body.data])
  })
})

describe('key rotation over a few thousand rows', () => {
  const N = 1100
  let before: Record<string, Rec[]>
  const pad = (n: number): string => String(n).padStart(8, '0')

  it(`loads ${2 * N} personal and denuncias rows under key A`, async () => {
    for (let i = 0; i < N; i += 50) {
      await Promise.all(Array.from({ length: 50 }, async (_, j) => {
        const n = i + j
        await created(admin, '/personal', { tip: `ROT-${n}`, nif: validDni(n), nombre: `N${n}`, apellidos: 'Rot', escala: 'oficial', fecha_nacimiento: `19${50 + (n % 50)}-0${1 + (n % 9)}-1${n % 9}`, ...(n % 7 !== 0 && { contacto_telefono: `6${pad(n)}` }) })
        await created(admin, '/denuncias', { denunciante_nombre: `D${n}`, tipo: 'hurto', fecha_hechos: '2026-03-15 10:30:00', lugar_hechos: 'Plaza', descripcion: 'x', denunciante_dni: validDni(50_000_000 + n), ...(n % 5 !== 0 && { denunciante_domicilio: `Calle ${n}`, denunciante_telefono: `7${n}` }), ...(n % 3 === 0 && { testigos: [{ nombre: `T${n}`, telefono: `8${n}` }] }) })
      }))
    }
    before = await snapshot(admin)
    expect(before.personal!.length + before.denuncias!.length).toBeGreaterThan(2 * N)
    expect(await staleCounts(kid(KEY_A))).toEqual(zeros)
  }, 180_000)

  it('with ENCRYPTION_KEY=B, ENCRYPTION_KEYS=A an instance reads old values and writes new ones under B', async () => {
    await withInstance({ ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEYS: KEY_A }, async (ab) => {
      expect(await snapshot(ab)).toEqual(before)
      const fresh = await created(ab, '/personal', bodyFor(mod('personal')))
      const row = await stored(mod('personal'), fresh._id)
      for (const f of enc(mod('personal'))) expect(kidOf(row[valueColumn(f)])).toBe(kid(KEY_B))
      expectView(mod('personal'), (await ab.get(`/personal/${fresh._id}`)).body.data, true, secretsFor.last, 'A+B')
      const old = before.denuncias!.find((r) => r.denunciante_telefono !== null)!
      expect((await ab.put(`/denuncias/${old._id}`, { denunciante_dni: '  99887766p' })).status).toBe(200)
      const mixed = await stored(mod('denuncias'), old._id)
      expect([kidOf(mixed.denunciante_dni), kidOf(mixed.denunciante_telefono)]).toEqual([kid(KEY_B), kid(KEY_A)])
      expect((await ab.get(`/denuncias/${old._id}`)).body.data).toMatchObject({ denunciante_dni: '99887766P', denunciante_telefono: old.denunciante_telefono })
      expect((await ab.get(`/denuncias${qs('denunciante_dni', '99887766p ')}`)).body.data.records[0]._id).toBe(old._id)
      // The instance still on key A alone cannot read a value under B: an error, never garbage.
      expectError(await admin.get(`/personal/${fresh._id}`), 'ERROR_INTERNO')
      before = await snapshot(ab)
    })
  })

  it('rotation re-encrypts every value under B; records, _hash and system keys unchanged; a second run rewrites nothing', async () => {
    const [stale, sys, keys] = [await staleCounts(kid(KEY_B)), await systemColumns(), await sysKeys()]
    expect(stale.personal! + stale.denuncias!).toBeGreaterThan(2 * N)
    const report = await rotate(toolEnv(KEY_B, KEY_A), false)
    expect([report.keyId, report.systemKeysRewrapped, rewritten(report)]).toEqual([kid(KEY_B), 4, stale])
    expect(report.modules.sys_historial!.rewritten).toBeGreaterThan(0) // the history's own copies moved too
    for (const m of encMods) expect(report.modules[m.name]!.scanned).toBe(sys[m.name]!.length)
    expect(await staleCounts(kid(KEY_B))).toEqual(zeros)
    expect(await systemColumns()).toEqual(sys)
    const after = await sysKeys()
    for (const n of ['firma', 'indice', 'integridad']) {
      expect(kidOf(after[n]!)).toBe(kid(KEY_B))
      expect(unwrap(KEY_B, n, after[n]!)).toEqual(unwrap(KEY_A, n, keys[n]!))
    }
    await withInstance({ ENCRYPTION_KEY: KEY_B }, async (onlyB) => {
      expect(await snapshot(onlyB)).toEqual(before)
      // History (docs/operator-guide.md "History and verification") of a record first written under key A must survive dropping key A too.
      const id = before.personal![300]!._id
      expect.soft((await onlyB.get(`/personal/${id}/historial`)).status, 'historial with key B only').toBe(200)
      expect.soft((await onlyB.get(`/personal/${id}/verificar`)).body.data, 'verificar with key B only').toEqual({ valido: true })
    })
    // Key A alone: a start refuses, naming the key sys_claves needs; the running A instance answers 500.
    await expect(h.app()).rejects.toThrow(kid(KEY_B))
    expectError(await admin.get(`/denuncias/${before.denuncias![0]!._id}`), 'ERROR_INTERNO')
    const again = await rotate(toolEnv(KEY_B, KEY_A), false)
    expect([again.systemKeysRewrapped, rewritten(again), again.modules.sys_historial?.rewritten]).toEqual([0, zeros, 0])
    // docs/operator-guide.md "Key rotation", step 4, drops key A: nothing stored anywhere (history included) may still need it.
    const left = Object.entries(await dump()).filter(([, text]) => text.includes(`v1:${kid(KEY_A)}:`)).map(([t]) => t)
    expect.soft(left, 'tables still holding values under key A').toEqual([])
  }, 120_000)

  it('--nueva-clave-indice rebuilds every blind index with a new indice key; integridad and records unchanged', async () => {
    const [keys, sys] = [await sysKeys(), await systemColumns()]
    const report = await rotate(toolEnv(KEY_B), true)
    const after = await sysKeys()
    expect(after.integridad).toBe(keys.integridad)
    const indexKey = unwrap(KEY_B, 'indice', after.indice!)
    expect(indexKey).not.toEqual(unwrap(KEY_B, 'indice', keys.indice!))
    for (const m of encMods) {
      const cols = enc(m).filter((f) => f.searchable).map((f) => `"${valueColumn(f)}" is not null`)
      expect(report.modules[m.name]!.rewritten, m.name).toBe(cols.length === 0 ? 0 : await count(`select count(*) as n from "${m.table}" where ${cols.join(' or ')}`))
    }
    expect(await systemColumns()).toEqual(sys)
    await withInstance({ ENCRYPTION_KEY: KEY_B }, async (fresh) => {
      for (const { m, f, value, id } of found) {
        const res = await fresh.get(`/${m.path}${qs(f.name, value.trim().toUpperCase())}`)
        expect(res.body.data.records.map((r: Rec) => r._id), `${m.name}.${f.name}`).toEqual([id])
        expect((await stored(m, id))[blindIndexColumn(f)]).toBe(hmac(indexKey, m.name, f.name, value))
      }
      const p = before.personal!.at(-100)!
      expect((await fresh.get(`/personal${qs('nif', p.nif.toUpperCase())}`)).body.data.records[0]._id).toBe(p._id)
      expectError(await fresh.post('/personal', { ...bodyFor(mod('personal')), nif: ` ${p.nif}` }), 'REGISTRO_DUPLICADO')
    })
  }, 120_000)

  it('--reindexar finishes an interrupted rebuild with the stored indice key', async () => {
    // An interrupted --nueva-clave-indice leaves some indexes under another key: simulate with garbage.
    const { m, f, value, id } = found[0]!
    await h.db.query(`update "${m.table}" set "${blindIndexColumn(f)}" = $1 where "_id" = $2`, ['0'.repeat(64), id])
    await withInstance({ ENCRYPTION_KEY: KEY_B }, async (api) => {
      expect((await api.get(`/${m.path}${qs(f.name, value)}`)).body.data.total).toBe(0)
    })
    const report = await rotateKeys({ batchSize: 200, newIndexKey: false, reindex: true, quiet: true, env: toolEnv(KEY_B), ...(h.db.embedded !== undefined && { embedded: h.db.embedded }) })
    expect(report.modules[m.name]!.rewritten).toBe(1)
    const indexKey = unwrap(KEY_B, 'indice', (await sysKeys()).indice!)
    expect((await stored(m, id))[blindIndexColumn(f)]).toBe(hmac(indexKey, m.name, f.name, value))
    await withInstance({ ENCRYPTION_KEY: KEY_B }, async (api) => {
      expect((await api.get(`/${m.path}${qs(f.name, value)}`)).body.data.records.map((r: Rec) => r._id)).toEqual([id])
    })
  }, 60_000)

  it('a write made while rotateModule runs is not lost, and the run leaves no value under the old key', async () => {
    const appBC = await h.app({ env: { ENCRYPTION_KEY: KEY_C, ENCRYPTION_KEYS: KEY_B } })
    onTestFinished(() => appBC.close())
    const bc = client(appBC, await login(appBC))
    const keys = [KEY_C, KEY_B].map((k) => Buffer.from(k, 'base64'))
    const cipher = createFieldCipher(keys, await loadSystemKeys(appBC.orm.em.fork(), keys))
    const [target, sys] = [before.personal![450]!, await systemColumns()]
    // Interleaving: the PUT starts while rotateModule holds the target's batch
    // (read under row locks); it must wait for the batch, then land intact.
    let pending: Promise<Res> | undefined
    // The records layer's reads (db/row-query.ts) go through the connection's rows(): the batch that holds the target reports it.
    const connection = appBC.orm.em.getConnection() as ServiceConnection
    const read = connection.rows.bind(connection)
    connection.rows = async (...args: Parameters<ServiceConnection['rows']>) => {
      const found = await read(...args)
      if (pending === undefined && found.some((r) => r._id === target._id)) pending = bc.put(`/personal/${target._id}`, { contacto_telefono: '611223344' })
      return found
    }
    onTestFinished(() => { connection.rows = read })
    const em = appBC.orm.em.fork()
    const done = await rotateModule(em, mod('personal'), cipher, { batchSize: 200 })
    const put = await pending
    expect([put?.status, done.scanned]).toEqual([200, sys.personal!.length])
    expect((await bc.get(`/personal/${target._id}`)).body.data).toMatchObject({ contacto_telefono: '611223344', nif: target.nif, fecha_nacimiento: target.fecha_nacimiento })
    const others = (rows: Rec[]): Rec[] => rows.filter((r) => r._id !== target._id)
    expect(others((await systemColumns()).personal!)).toEqual(others(sys.personal!))
    expect((await staleCounts(kid(KEY_C))).personal, 'personal rows left under key B by a completed run').toBe(0)
  }, 60_000)
})
