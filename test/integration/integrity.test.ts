/**
 * The hash chain (docs/operator-guide.md "The hash chain", "History and
 * verification"): it holds after long random sequences of updates, deletes,
 * restores and state moves; history entries carry the right version, action,
 * hash and changed fields; tampering behind the service's back (live row,
 * ciphertext, history rows, versions) is found at the right version; and the
 * documented algorithm — the auditor script and a recomputation here from the
 * docs/operator-guide.md rules — agrees with the service, also across the autumn DST fold.
 */
import { createHash, createHmac } from 'node:crypto'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import { entityName } from '../../db/module-entity.js'
import { findRow } from '../../db/row-query.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import type { Harness } from '../helpers/app.js'
import { client, ok, sampleBody, validDni, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { rowHome, setInVersion, versionRow } from '../helpers/version-row.js'

type Rec = Record<string, any>
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const registry = loadRegistry('modules.yaml')
const mod = (name: string): ModuleDef => registry.byName.get(name)!
const TZ = 'Europe/Madrid'

let h: Harness, app: FastifyInstance, api: Api, token: string, integrityKey: string, dir: string
const refs = new Map<string, string>()
const personalPool: string[] = []

/** Canonical JSON as docs/operator-guide.md states it, written apart from the service's code. */
const canon = (v: unknown): string => v === null || typeof v !== 'object'
  ? JSON.stringify(v ?? null)
  : Array.isArray(v) ? `[${v.map(canon).join(',')}]`
    : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon((v as Rec)[k])}`).join(',')}}`
const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex')
const fmt = new Intl.DateTimeFormat('en-GB', { timeZone: TZ, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
const local = (ms: number): string => { const p = Object.fromEntries(fmt.formatToParts(ms).map((x) => [x.type, x.value])); return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}` }
/** Every UTC instant (`…Z`) a local `YYYY-MM-DD HH:MM:SS` can name. */
const instants = (l: string): string[] => [...new Set(Array.from({ length: 29 }, (_, i) => Date.parse(`${l.replace(' ', 'T')}Z`) - (i - 14) * 3_600_000)
  .filter((ms) => local(ms) === l).map((ms) => new Date(ms).toISOString().replace('.000Z', 'Z')))]

const historial = async (m: ModuleDef, id: string): Promise<Rec[]> => ok(await api.get(`/${m.path}/${id}/historial`)).versiones
const verificar = async (m: ModuleDef, id: string): Promise<Rec> => ok(await api.get(`/${m.path}/${id}/verificar`))
const create = async (m: ModuleDef, extra: Rec = {}, requiredOnly = false): Promise<Rec> => ok(await api.post(`/${m.path}`, { ...sampleBody(m, refs, requiredOnly), ...extra }), 201)
const put = async (m: ModuleDef, id: string, body: Rec): Promise<Rec> => ok(await api.put(`/${m.path}/${id}`, body))
/** Runs the auditor script on the record's history as read now. */
async function auditor (m: ModuleDef, id: string, reader = api): Promise<{ code: number, out: string }> {
  const file = join(dir, `${id}-${Date.now()}.json`)
  writeFileSync(file, JSON.stringify((await reader.get(`/${m.path}/${id}/historial`)).body))
  const args = ['deploy/auditoria/verificar-cadena.mjs', file, '--modulo', m.name, ...(m.fields.some((f) => f.encrypted) ? ['--clave-integridad', integrityKey] : [])]
  return new Promise((resolve) => execFile(process.execPath, args, { cwd: ROOT }, (err, stdout, stderr) =>
    resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), out: stdout + stderr })))
}
async function expectAuditorOk (m: ModuleDef, id: string, versions: number): Promise<void> {
  const r = await auditor(m, id)
  expect([r.code, r.out.match(/: correct$/gm)?.length, r.out.includes('Chain intact.')], r.out).toEqual([0, versions, true])
}

beforeAll(async () => {
  ({ h, app, token, admin: api } = await startTestApp())
  integrityKey = (await loadSystemKeys(app.orm.em.fork(), h.config.encryptionKeys)).integrityKey.toString('base64')
  dir = mkdtempSync(join(tmpdir(), 'integridad-'))
  for (let i = 0; i < 3; i++) personalPool.push((await create(mod('personal')))._id)
  refs.set('personal', personalPool[0]!)
  refs.set('vehiculos', (await create(mod('vehiculos')))._id)
})
afterAll(async () => { await h.close(); rmSync(dir, { recursive: true, force: true }) })

// ---------------------------------------------------------------- random sequences
const SAFE_FROM = Date.UTC(2020, 0, 1)
/** Instants away from DST changes (no March, no October), to whole seconds. */
const instantArb = fc.integer({ min: 0, max: 3000 * 86_400 - 1 }).map((s) => SAFE_FROM + s * 1000).filter((ms) => ![2, 9].includes(new Date(ms).getUTCMonth()))
const textArb = (max: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'abcxyzñáÉ 019-'.split('')), minLength: 1, maxLength: Math.min(max, 12) })
/** A structured array's items (docs/user-guide.md "Structured arrays"): a sub-field sent as null is left out of the item shown. */
function itemsArb (subs: readonly FieldDef[]): fc.Arbitrary<[unknown, unknown]> {
  const item = fc.tuple(...subs.map((s) => valueArb(s).map(([sent, shown]) => [s.name, sent, shown] as const)))
    .map((entries) => [Object.fromEntries(entries.map(([k, sent]) => [k, sent])), Object.fromEntries(entries.filter(([, , shown]) => shown !== null).map(([k, , shown]) => [k, shown]))])
  return fc.array(item, { maxLength: 3 }).map((items) => [items.map((i) => i[0]), items.map((i) => i[1])])
}

/** [value to send, value the API shows back]. */
function valueArb (f: FieldDef): fc.Arbitrary<[unknown, unknown]> {
  const same = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<[unknown, unknown]> => a.map((v) => [v, v])
  let arb: fc.Arbitrary<[unknown, unknown]>
  switch (f.type) {
    case 'string': arb = f.enum !== undefined ? same(fc.constantFrom(...f.enum)) : f.format === 'dni' ? same(fc.integer({ min: 0, max: 99_999_999 }).map(validDni)) : same(textArb(f.maxLength ?? 500)); break
    case 'text': arb = same(textArb(40)); break
    case 'integer': arb = same(fc.integer({ min: f.min ?? -1000, max: f.max ?? 1_000_000 })); break
    case 'decimal': arb = same(fc.integer({ min: Math.ceil((f.min ?? -10_000) * 100), max: 10_000_000 }).map((c) => c / 100)); break
    case 'boolean': arb = same(fc.boolean()); break
    case 'date': arb = same(instantArb.map((ms) => new Date(ms).toISOString().slice(0, 10))); break
    case 'time': arb = same(fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([a, b]) => `${String(a).padStart(2, '0')}:${String(b).padStart(2, '0')}`)); break
    case 'datetime': arb = fc.tuple(instantArb, fc.boolean()).map(([ms, iso]) => [iso ? new Date(ms).toISOString() : local(ms), local(ms)]); break
    case 'array': arb = f.items === undefined ? same(fc.array(fc.oneof(textArb(8), fc.record({ nombre: textArb(8), n: fc.integer({ min: 0, max: 99 }) })), { maxLength: 3 })) : itemsArb(f.items); break
    case 'ref': arb = same(fc.constantFrom(...(f.ref === 'personal' ? personalPool : [refs.get(f.ref!)!]))); break
    // A body may hold URL strings in a file field (files arrive by upload: test/integration/files*.test.ts).
    case 'file': arb = same(fc.array(textArb(8), { maxLength: 3 })); break
    default: throw new Error(`no generator for ${f.type}`)
  }
  return f.required ? arb : fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant<[unknown, unknown]>([null, null]) })
}
type Op = { k: 'put', r: number, pairs: Array<[string, [unknown, unknown]]> } | { k: 'same', r: number, field: string }
  | { k: 'del', r: number } | { k: 'restore', r: number } | { k: 'move', r: number, to: string, withRequires: boolean }
interface Model { m: ModuleDef, id: string, values: Rec, version: number, deleted: boolean, log: Array<[string, string[]]> }
const RANDOM_MODULES = ['vehiculos', 'personal', 'denuncias', 'sanciones'].map(mod)
const hasMoves = (m: ModuleDef): boolean => m.stateField !== undefined && m.transitions.length > 0

function opArb (m: ModuleDef, r: number): fc.Arbitrary<Op> {
  const editable = m.fields.filter((f) => f.type !== 'password' && !(hasMoves(m) && f.name === m.stateField))
  const ops: Array<fc.WeightedArbitrary<Op>> = [
    { weight: 5, arbitrary: fc.array(fc.oneof(...editable.map((f) => valueArb(f).map((v) => [f.name, v] as [string, [unknown, unknown]]))), { minLength: 1, maxLength: 3 }).map((pairs) => ({ k: 'put' as const, r, pairs })) },
    { weight: 2, arbitrary: fc.constantFrom(...editable.map((f) => f.name)).map((field) => ({ k: 'same' as const, r, field })) },
    { weight: 1, arbitrary: fc.constant({ k: 'del' as const, r }) },
    { weight: 2, arbitrary: fc.constant({ k: 'restore' as const, r }) },
  ]
  if (hasMoves(m)) ops.push({ weight: 8, arbitrary: fc.record({ to: fc.constantFrom(...m.fieldMap.get(m.stateField!)!.enum!), withRequires: fc.boolean() }).map((o) => ({ k: 'move' as const, r, ...o })) })
  return fc.oneof(...ops)
}

let uniq = 0
/** Applies one operation through the API and to the model, checking the answer. */
async function apply (op: Op, s: Model): Promise<void> {
  const url = `/${s.m.path}/${s.id}`
  if (op.k === 'del' || op.k === 'restore') {
    const res = op.k === 'del' ? await api.del(url) : await api.post(`${url}/restaurar`)
    if (op.k === 'del' && s.deleted) return expectError(res, 'REGISTRO_NO_ENCONTRADO')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    if (op.k === 'restore' && !s.deleted) { expect(res.body.data._version).toBe(s.version); return }
    s.version++; s.deleted = op.k === 'del'; s.log.push([op.k === 'del' ? 'eliminar' : 'restaurar', []])
    if (op.k === 'restore') expect(res.body.data).toMatchObject({ ...s.values, _version: s.version, _deleted: null })
    return
  }
  const sent: Rec = {}, shown: Rec = {}
  if (op.k === 'put') {
    for (const [name, [v, show]] of op.pairs) {
      const f = s.m.fieldMap.get(name)!
      // A unique value per put: a DNI numbered by the counter alone, above the sample bodies' (10,000,000 + n), with its
      // check letter (a random number plus the counter could meet an earlier put's).
      const u = !f.unique || typeof v !== 'string' ? v : f.format === 'dni' ? validDni(20_000_000 + ++uniq) : `u${++uniq}_${v}`.slice(0, f.maxLength ?? 500)
      sent[name] = u; shown[name] = f.unique && typeof v === 'string' ? u : show
    }
  } else if (op.k === 'same') {
    sent[op.field] = shown[op.field] = s.values[op.field]
  } else {
    sent[s.m.stateField!] = shown[s.m.stateField!] = op.to
    const move = s.m.transitions.find((t) => t.from === s.values[s.m.stateField!] && t.to === op.to)
    for (const f of op.withRequires ? move?.requires ?? [] : []) {
      const def = s.m.fieldMap.get(f)!
      sent[f] = shown[f] = def.type === 'ref' ? personalPool[uniq++ % personalPool.length] : def.type === 'date' ? '2026-05-0' + String(1 + (uniq++ % 9)) : `req-${uniq++}`
    }
  }
  const res = await api.put(url, sent)
  if (s.deleted) return expectError(res, 'REGISTRO_NO_ENCONTRADO')
  if (op.k === 'move' && op.to !== s.values[s.m.stateField!]) {
    const move = s.m.transitions.find((t) => t.from === s.values[s.m.stateField!] && t.to === op.to)
    if (move === undefined) return expectError(res, 'TRANSICION_NO_PERMITIDA')
    const missing = move.requires.filter((f) => (f in shown ? shown[f] : s.values[f]) === null)
    if (missing.length > 0) { expectError(res, 'DATOS_REQUERIDOS'); expect(res.body.detalles.map((d: Rec) => d.campo)).toEqual(missing); return }
  }
  expect(res.status, JSON.stringify({ sent, body: res.body })).toBe(200)
  const campos = Object.keys(shown).filter((k) => canon(shown[k]) !== canon(s.values[k]))
  Object.assign(s.values, shown)
  s.version++; s.log.push(['editar', campos])
  const { _restringidos, ...data } = res.body.data
  expect(_restringidos).toBeUndefined()
  for (const f of s.m.fields) expect(canon(data[f.name]), f.name).toBe(canon(s.values[f.name]))
  expect(data._version).toBe(s.version)
}

/** The history, the live version and the chain agree with the model. */
async function checkModel (s: Model): Promise<void> {
  const versions = await historial(s.m, s.id)
  expect(versions.map((v) => v._version)).toEqual(versions.map((_, i) => i + 1))
  expect(versions.map((v) => [v.accion, [...v.campos].sort()])).toEqual(s.log.map(([a, c]) => [a, [...c].sort()]))
  for (const v of versions) expect([v.registro._hash, v.registro._version]).toEqual([v._hash, v._version])
  const last = versions.at(-1)!.registro
  for (const f of s.m.fields) expect(canon(last[f.name]), f.name).toBe(canon(s.values[f.name]))
  expect(last._deleted === null).toBe(!s.deleted)
  const [row] = await h.db.query<{ _version: number, _hash: string }>(`select "_version", "_hash" from "${s.m.table}" where "_id" = $1`, [s.id])
  expect(row).toEqual({ _version: versions.length, _hash: last._hash })
  expect(versions.length).toBe(s.version)
  expect(await verificar(s.m, s.id)).toEqual({ valido: true })
}

describe('random sequences of writes', () => {
  it('keep a valid chain, a history of 1..n and exact changed fields', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.oneof(...RANDOM_MODULES.map((m, r) => opArb(m, r))), { minLength: 30, maxLength: 60 }), fc.boolean(),
      async (ops, minimal) => {
        const models: Model[] = []
        for (const m of RANDOM_MODULES) {
          const d = await create(m, {}, minimal)
          const values = Object.fromEntries(m.fields.filter((f) => f.type !== 'password').map((f) => [f.name, d[f.name]]))
          models.push({ m, id: d._id, values, version: 1, deleted: false, log: [['crear', Object.keys(values).filter((k) => values[k] !== null)]] })
        }
        for (const op of ops) await apply(op, models[op.r]!)
        for (const s of models) { await checkModel(s); await expectAuditorOk(s.m, s.id, s.version) }
      }), { numRuns: 8 })
  }, 240_000)
})

// ---------------------------------------------------------------- each version stored once
describe('each version is stored once (docs/decisions.md "Each version stored once")', () => {
  it('a create, an update and a delete: no entry has datos, each carries the row before it, /historial shows the three versions', async () => {
    const veh = mod('vehiculos')
    /** The live row as the service reads it, in the form the history keeps (JSON). */
    const stored = async (id: string): Promise<Rec> => JSON.parse(JSON.stringify(await findRow(app.orm.em.fork(), entityName(veh), { _id: id }))) as Rec
    const r = await create(veh, { marca: 'Seat' })
    const row1 = await stored(r._id)
    await put(veh, r._id, { marca: 'Renault' })
    const row2 = await stored(r._id)
    expect((await api.del(`/${veh.path}/${r._id}`)).status).toBe(200)
    const row3 = await stored(r._id)
    expect([row1._version, row2._version, row3._version]).toEqual([1, 2, 3])
    const entries = await h.db.query<Rec>('select version, datos, anterior from sys_historial where registro = $1 order by version', [r._id])
    expect(entries.map((e) => [e.version, e.datos])).toEqual([[1, null], [2, null], [3, null]])
    expect(entries.map((e) => e.anterior)).toEqual([null, row1, row2])
    const versions = await historial(veh, r._id)
    expect(versions.map((x) => [x._version, x.accion, x.registro.marca, x.registro._deleted === null])).toEqual([[1, 'crear', 'Seat', true], [2, 'editar', 'Renault', true], [3, 'eliminar', 'Renault', false]])
    expect(versions.map((x) => x._hash)).toEqual([row1._hash, row2._hash, row3._hash])
    expect(await verificar(veh, r._id)).toEqual({ valido: true })
  })
})

// ---------------------------------------------------------------- tampering
describe('tampering behind the service is found at the right version', () => {
  const veh = mod('vehiculos')
  const per = mod('personal')
  let v: Rec, p1: Rec, p2: Rec
  const sql = (text: string, params: unknown[]): Promise<unknown[]> => h.db.query(text, params)
  const broken = async (m: ModuleDef, id: string, version: number): Promise<void> => { expect(await verificar(m, id)).toMatchObject({ valido: false, version_rota: version, motivo: expect.any(String) }) }
  const valid = async (m: ModuleDef, id: string): Promise<void> => { expect(await verificar(m, id)).toEqual({ valido: true }) }

  beforeAll(async () => {
    v = await create(veh, { marca: 'Seat' })
    await put(veh, v._id, { marca: 'Renault' })
    v = await put(veh, v._id, { km_actuales: 5000 })
    p1 = await create(per); p2 = await create(per)
    await put(per, p1._id, { contacto_telefono: '600111222' })
    p1 = await put(per, p1._id, { destino: 'Tráfico' })
    expect([v._version, p1._version]).toEqual([3, 3])
  })

  it.each([['marca', 'Falsa'], ['km_actuales', 1], ['_modified_by', 'USR-2026-99999'], ['_created', new Date(Date.UTC(2020, 0, 1))], ['_deleted', new Date()], ['_hash', 'f'.repeat(64)]])('a plain column %s of the live row: current version; undone: valid', async (col, value) => {
    const [orig] = await sql(`select "${col}" as x from "${veh.table}" where "_id" = $1`, [v._id]) as Array<{ x: unknown }>
    await sql(`update "${veh.table}" set "${col}" = $2 where "_id" = $1`, [v._id, value])
    await broken(veh, v._id, 3)
    await sql(`update "${veh.table}" set "${col}" = $2 where "_id" = $1`, [v._id, orig!.x])
    await valid(veh, v._id)
  })

  it.each(per.fields.filter((f) => f.encrypted).map((f) => [f.name, f] as const))('an encrypted column (%s) replaced by another record\'s ciphertext: current version; undone: valid', async (_n, f) => {
    const col = valueColumn(f)
    const text = (n: number): string => f.format === 'dni' ? validDni(n) : `${n}`.slice(0, 20)
    await put(per, p2._id, { [f.name]: f.type === 'date' ? '1980-02-03' : text(Date.now() % 90_000_000) })
    p1 = await put(per, p1._id, { [f.name]: f.type === 'date' ? '1979-01-02' : text(Date.now() % 90_000_000 + 1) })
    const [orig] = await sql(`select "${col}" as x from "${per.table}" where "_id" = $1`, [p1._id]) as Array<{ x: string }>
    await sql(`update "${per.table}" set "${col}" = (select "${col}" from "${per.table}" where "_id" = $2) where "_id" = $1`, [p1._id, p2._id])
    await broken(per, p1._id, p1._version)
    await sql(`update "${per.table}" set "${col}" = $2 where "_id" = $1`, [p1._id, orig!.x])
    await valid(per, p1._id)
  })

  it('a version\'s stored row (wherever it lives) or its entry\'s hash: that version; undone: valid', async () => {
    // Version 1's row is in entry 2's `anterior`, version 2's in entry 3's, version 3's is the live row (test/helpers/version-row.ts).
    for (const [key, value] of [['marca', 'Falsa'], ['_created_by', 'USR-2026-99999']]) {
      for (const version of [1, 2, 3]) {
        const undo = await setInVersion(sql, veh.table, v._id, version, key!, value!)
        await broken(veh, v._id, version)
        await undo()
        await valid(veh, v._id)
      }
    }
    for (const version of [1, 2, 3]) {
      const [orig] = await sql('select hash as x from sys_historial where registro = $1 and version = $2', [v._id, version]) as Array<{ x: string }>
      await sql(`update sys_historial set hash = '${'0'.repeat(64)}' where registro = $1 and version = $2`, [v._id, version])
      await broken(veh, v._id, version)
      await sql('update sys_historial set hash = $3 where registro = $1 and version = $2', [v._id, version, orig!.x])
      await valid(veh, v._id)
    }
    // an encrypted value inside a stored version, swapped for another record's
    const nif = valueColumn(per.fieldMap.get('nif')!)
    expect((await rowHome(sql, p1._id, 1)).at).toBe('history')
    await setInVersion(sql, per.table, p1._id, 1, nif, (await versionRow(sql, per.table, p2._id, 1))[nif])
    await broken(per, p1._id, 1)
  })

  it.each([['usuario', `'USR-2026-99999'`], ['fecha', `fecha - interval '1 day'`], ['accion', `'eliminar'`], ['campos', `'["marca","modelo"]'::jsonb`]])(
    'a history row\'s %s column (what historial reports) edited: that version; undone: valid', async (col, edit) => {
      const [orig] = await sql(`select ${col} as x from sys_historial where registro = $1 and version = 2`, [v._id]) as Array<{ x: unknown }>
      await sql(`update sys_historial set ${col} = ${edit} where registro = $1 and version = 2`, [v._id])
      const shown = (await historial(veh, v._id))[1]!
      const truth: Rec = { usuario: shown.registro._modified_by, fecha: shown.registro._modified, accion: 'editar', campos: orig!.x }
      expect(shown[col]).not.toEqual(truth[col]) // historial now reports something that never happened
      try { await broken(veh, v._id, 2) } finally {
        await sql(`update sys_historial set ${col} = $2${col === 'campos' ? '::jsonb' : ''} where registro = $1 and version = 2`, [v._id, col === 'campos' ? JSON.stringify(orig!.x) : orig!.x])
      }
      await valid(veh, v._id)
    })

  it('a deleted history row: that version; put back: valid', async () => {
    const jsonOrNull = (x: unknown): string | null => x === null ? null : JSON.stringify(x)
    for (const version of [2, 1, 3]) {
      const [row] = await sql('select * from sys_historial where registro = $1 and version = $2', [v._id, version]) as Rec[]
      // Entry n carries version n-1's row (`anterior`): deleting it also loses that row; the gap is still where the chain breaks.
      await sql('delete from sys_historial where registro = $1 and version = $2', [v._id, version])
      await broken(veh, v._id, version)
      await sql('insert into sys_historial (id, modulo, registro, version, accion, usuario, fecha, hash, campos, datos, anterior, sello) values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11::jsonb, $12)',
        [row!.id, row!.modulo, row!.registro, row!.version, row!.accion, row!.usuario, row!.fecha, row!.hash, JSON.stringify(row!.campos), jsonOrNull(row!.datos), jsonOrNull(row!.anterior), row!.sello])
      await valid(veh, v._id)
    }
    // Only a version's row removed from where it lives (entry 3's `anterior`, version 2's row): that version.
    const [{ anterior }] = await sql('select anterior::text from sys_historial where registro = $1 and version = 3', [v._id]) as [Rec]
    await sql('update sys_historial set anterior = null where registro = $1 and version = 3', [v._id])
    await broken(veh, v._id, 2)
    await sql('update sys_historial set anterior = $2::jsonb where registro = $1 and version = 3', [v._id, anterior])
    await valid(veh, v._id)
  })

  it('an inserted or renumbered history row: that version; undone: valid', async () => {
    // A whole entry copied, the row it carries (`anterior`) too; the live row stays version 3's (records/history.ts versionsOf).
    const copy = 'insert into sys_historial (modulo, registro, version, accion, usuario, fecha, hash, campos, datos, anterior, sello) select modulo, registro, $3, accion, usuario, fecha, hash, campos, datos, anterior, sello from sys_historial where registro = $1 and version = $2'
    await sql(copy, [v._id, 3, 4])
    await broken(veh, v._id, 4)
    await sql('delete from sys_historial where registro = $1 and version = 4', [v._id])
    await valid(veh, v._id)
    // renumbered: version 2 moved to 7 (a gap), then swapped with version 3, then swapped back
    const renumber = async (...moves: Array<[number, number]>): Promise<void> => {
      for (const [from, to] of moves) await sql('update sys_historial set version = $3 where registro = $1 and version = $2', [v._id, from, to])
    }
    await renumber([2, 7]); await broken(veh, v._id, 2)
    // Swapped: each entry carries the row of the version before it (`anterior`), so the entry now numbered 2 carries
    // version 2's row where version 1's belongs, and version 1 is the first that no longer holds.
    await renumber([3, 2], [7, 3]); await broken(veh, v._id, 1)
    // The same swap with each row left where its version's is (the `anterior`s swapped back): version 2.
    const swapRows = 'update sys_historial h set anterior = o.anterior from sys_historial o where h.registro = $1 and o.registro = $1 and h.version in (2, 3) and o.version = 5 - h.version'
    await sql(swapRows, [v._id]); await broken(veh, v._id, 2); await sql(swapRows, [v._id])
    await renumber([2, 7], [3, 2], [7, 3]); await valid(veh, v._id)
  })

  it('a live row whose _version was changed: broken at the version it claims; undone: valid', async () => {
    for (const [to, rota] of [[4, 4], [9, 4], [2, 2]] as const) {
      await sql(`update "${veh.table}" set "_version" = $2 where "_id" = $1`, [v._id, to])
      await broken(veh, v._id, rota)
      await sql(`update "${veh.table}" set "_version" = 3 where "_id" = $1`, [v._id])
      await valid(veh, v._id)
    }
  })
})

// ---------------------------------------------------------------- the documented algorithm
/** Every hash the rules of docs/operator-guide.md give for a version read from `historial` (one per reading of ambiguous local times). */
function readmeHashes (m: ModuleDef, version: Rec, prev: string): string[] {
  const r = version.registro
  // Formats 2 and 3 leave out fields without a value; format 1 keeps its sealed fields when null.
  const sealedNulls = new Set<string>(version.sello === 1 ? version.campos_sellados : [])
  const key = Buffer.from(integrityKey, 'base64')
  const dts = [...m.fields.filter((f) => f.type === 'datetime').map((f) => f.name), '_created', '_modified', '_deleted'].filter((k) => typeof r[k] === 'string')
  let combos: Rec[] = [{}]
  for (const k of dts) combos = combos.flatMap((c) => instants(r[k]).map((i) => ({ ...c, [k]: i })))
  return combos.map((dt) => {
    const o: Rec = { _id: r._id, _version: r._version, _created_by: r._created_by, _modified_by: r._modified_by, _deleted: null, _prev: prev, ...dt }
    // Formats 3 and 4 (modules with encrypted fields): the keyed `_clave`.
    if (version.sello >= 3) o._clave = createHmac('sha256', key).update(`sello\u0000${r._id}\u0000${r._version}`, 'utf8').digest('hex')
    for (const f of m.fields) {
      const x = r[f.name] ?? null
      if (x === null && !sealedNulls.has(f.name)) continue
      const digest = (v: unknown): string => createHmac('sha256', key).update(typeof v === 'string' ? v : canon(v), 'utf8').digest('hex')
      // Format 4: each encrypted sub-field of an item as the HMAC of its plaintext.
      const items = (v: unknown[]): unknown[] => v.map((it) => it === null || typeof it !== 'object' ? it : Object.fromEntries(Object.entries(it as Rec).map(([k, y]) => [k, f.items!.find((s) => s.name === k)?.encrypted === true ? digest(y) : y])))
      o[f.name] = x === null ? null : f.encrypted ? digest(x) : f.type === 'datetime' ? dt[f.name] : version.sello === 4 && f.items !== undefined ? items(x) : x
    }
    return sha(canon(o))
  })
}

describe('the documented algorithm', () => {
  it('the worked example of docs/operator-guide.md hashes as documented', () => {
    const guide = readFileSync(join(ROOT, 'docs/operator-guide.md'), 'utf8')
    const text = /^(\{"_created":"2026-06-01T08:30:00Z".*\})$/m.exec(guide)![1]!
    const [h1, h2] = [...guide.matchAll(/`([0-9a-f]{64})`/g)].map((x) => x[1]!)
    expect(canon(JSON.parse(text))).toBe(text)
    expect(sha(text)).toBe(h1)
    expect(sha(canon({ ...JSON.parse(text), _version: 2, _prev: h1, km_actuales: 121000, _modified: '2026-06-02T10:00:00Z' }))).toBe(h2)
  })

  it.each(['vehiculos', 'personal'])('%s: the auditor script and a recomputation agree with every version; a tampered history fails', async (name) => {
    const m = mod(name)
    const r = await create(m)
    const text = m.fields.find((f) => f.type === 'string' && !f.enum && !f.unique && !f.encrypted)!
    await put(m, r._id, { [text.name]: 'Cambio ñ "uno"' })
    expect((await api.del(`/${m.path}/${r._id}`)).status).toBe(200)
    expect((await api.post(`/${m.path}/${r._id}/restaurar`)).status).toBe(200)
    const enc = m.fields.find((f) => f.encrypted && f.type === 'string' && !f.unique)
    await put(m, r._id, { [text.name]: 'Cambio dos', ...(enc && { [enc.name]: 'Secreto ñ 1' }) })
    const versions = await historial(m, r._id)
    expect(versions.map((x) => x.accion)).toEqual(['crear', 'editar', 'eliminar', 'restaurar', 'editar'])
    let prev = ''
    for (const x of versions) { expect(x.sello).toBe(m.fields.some((f) => f.encrypted) ? 3 : 2); expect(readmeHashes(m, x, prev)).toContain(x._hash); prev = x._hash }
    await expectAuditorOk(m, r._id, 5)
    // Version 2's row, where it lives (entry 3's `anterior`).
    expect(await rowHome((t, p) => h.db.query(t, p), r._id, 2)).toEqual({ at: 'history', version: 3, column: 'anterior' })
    await setInVersion((t, p) => h.db.query(t, p), m.table, r._id, 2, valueColumn(text), 'Otro')
    const bad = await auditor(m, r._id)
    expect(bad.code, bad.out).toBe(1)
    expect(bad.out).toMatch(/version 2 \(editar, [^)]*\): DOES NOT MATCH/)
    expect(bad.out).toContain('The chain is NOT intact.')
    expect(await verificar(m, r._id)).toMatchObject({ valido: false, version_rota: 2, motivo: expect.any(String) })
  })

  it('a history read by a role that may not decrypt is a usage error (exit 2), not a broken chain', async () => {
    const den = mod('denuncias')
    const r = await create(den)
    expect(den.fields.filter((f) => f.encrypted).every((f) => r[f.name] !== null)).toBe(true)
    await expectAuditorOk(den, r._id, 1)
    const masked = await auditor(den, r._id, client(app, (await newUser(app, token, 'consulta')).token))
    expect(masked.code, masked.out).toBe(2)
    expect(masked.out).not.toMatch(/DOES NOT MATCH|NOT intact/)
  })

  it('records with date-times in the autumn DST fold still verify', async () => {
    const den = mod('denuncias')
    const a = await create(den, { fecha_hechos: '2026-10-25T00:30:00Z' })
    const b = await create(den, { fecha_hechos: '2026-10-25T01:30:00Z' })
    expect([a.fecha_hechos, b.fecha_hechos]).toEqual(['2026-10-25 02:30:00', '2026-10-25 02:30:00'])
    const stored = await h.db.query<{ f: Date }>(`select fecha_hechos as f from "${den.table}" where "_id" in ($1, $2) order by "_id"`, [a._id, b._id])
    expect(stored.map((s) => new Date(s.f).toISOString())).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z'])
    for (const r of [a, b]) { await expectAuditorOk(den, r._id, 1); expect(await verificar(den, r._id)).toEqual({ valido: true }) }
    // moving a to the second instant changes the value (and its hash), not what is shown
    const a2 = await put(den, a._id, { fecha_hechos: '2026-10-25T01:30:00Z' })
    expect(a2.fecha_hechos).toBe('2026-10-25 02:30:00')
    expect((await historial(den, a._id)).map((x) => x.campos)).toEqual([expect.arrayContaining(['fecha_hechos']), ['fecha_hechos']])
    await expectAuditorOk(den, a._id, 2)
    expect(await verificar(den, a._id)).toEqual({ valido: true })
  })
})
