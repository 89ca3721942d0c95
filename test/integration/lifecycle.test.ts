/**
 * The record lifecycle (docs/administrator-guide.md "State
 * machines"; docs/user-guide.md "Concurrency, delete and restore";
 * docs/operator-guide.md "Read log", "History and verification"): every state
 * machine of modules.yaml move by move, the diagrams of
 * docs/administrator-guide.md in sync with it,
 * optimistic locking and serialised writes under concurrency, soft delete and
 * restore, the read log of decrypted data, and masking in the history.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { compileAccess } from '../../core/access.js'
import { ERRORS, type ErrorCode } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { Action, ModuleDef, TransitionDef } from '../../core/registry/types.js'
import { BEGIN, END, stateSection } from '../../core/state-diagram.js'
import type { Harness } from '../helpers/app.js'
import { client, login, ok, refOrder, sampleBody, sampleValue, withheldNames, type Res, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { queriesOf } from '../helpers/sql-capture.js'

type Rec = Record<string, any>
const registry = loadRegistry('modules.yaml')
// Whole (unscoped) permissions; row-level scope has its own tests (scope.test.ts).
const access = compileAccess(registry)
const perms = { can: (role: string, module: string, action: Action): boolean => access.scope(role, module, action) === 'all' }
const mod = (name: string): ModuleDef => registry.byName.get(name)!
/** A failed answer as `tally` counts it. */
const outcome = (code: ErrorCode): string => `${ERRORS[code].status} ${ERRORS[code].message}`

let h: Harness, app: FastifyInstance, admin: Api, n = 0
const users = new Map<string, { id: string, api: Api }>()
const as = (rol: string): Api => users.get(rol)!.api
const refs = new Map<string, string>()

const create = async (m: ModuleDef, extra: Rec = {}, requiredOnly = false): Promise<Rec> => ok(await admin.post(`/${m.path}`, { ...sampleBody(m, refs, requiredOnly), ...extra }), 201)
const versions = async (m: ModuleDef, id: string, api = admin): Promise<Rec[]> => ok(await api.get(`/${m.path}/${id}/historial`)).versiones

beforeAll(async () => {
  ({ h, app, admin } = await startTestApp())
  users.set('superadmin', { id: ok(await admin.get('/me'))._id, api: admin })
  for (const rol of registry.roles.map((r) => r.name).filter((r) => r !== 'superadmin')) {
    const u = await newUser(app, (await login(app)), rol)
    users.set(rol, { id: u.id, api: client(app, u.token) })
  }
  const targets = new Set(registry.modules.flatMap((m) => m.fields.flatMap((f) => f.ref !== undefined ? [f.ref] : [])))
  for (const m of refOrder(registry)) if (targets.has(m.name) && !m.users) refs.set(m.name, (await create(m))._id)
})
afterAll(async () => { await h.close() })

// ---------------------------------------------------------------- state machines
const withMoves = registry.modules.filter((m) => m.stateField !== undefined && m.transitions.length > 0)
const withoutMoves = registry.modules.filter((m) => m.stateField !== undefined && m.transitions.length === 0)
const states = (m: ModuleDef): readonly string[] => m.fieldMap.get(m.stateField!)!.enum!
const pairs = (m: ModuleDef): Array<[string, string]> => states(m).flatMap((a) => states(m).filter((b) => b !== a).map((b) => [a, b] as [string, string]))

describe('state machines (generated from modules.yaml)', () => {
  it('there is at least one module with declared moves and one without', () => {
    expect(withMoves.length).toBeGreaterThan(0)
    expect(withoutMoves.length).toBeGreaterThan(0)
  })

  describe.each(withMoves.map((m) => [m.name, m] as const))('%s', (_name, m) => {
    const sf = m.stateField!
    const moveOf = (a: string, b: string) => m.transitions.find((t) => t.from === a && t.to === b)
    const required = (a: string, b: string): Rec => Object.fromEntries((moveOf(a, b)?.requires ?? []).map((f) => [f, sampleValue(m.fieldMap.get(f)!, refs, ++n)]))

    it('every ordered pair of states: 200 when declared (with its required fields), else 409', async () => {
      for (const [a, b] of pairs(m)) {
        const r = await create(m, { [sf]: a }, true)
        expect(r[sf]).toBe(a)
        const res = await admin.put(`/${m.path}/${r._id}`, { [sf]: b, ...required(a, b) })
        if (moveOf(a, b) !== undefined) {
          expect(ok(res), `${a} → ${b}`).toMatchObject({ [sf]: b, _version: 2 })
          expect((await versions(m, r._id)).at(-1)!.campos).toContain(sf)
        } else {
          expectError(res, 'TRANSICION_NO_PERMITIDA')
          expect(ok(await admin.get(`/${m.path}/${r._id}`))).toMatchObject({ [sf]: a, _version: 1 })
        }
      }
    })

    const needing: Array<[string, TransitionDef | undefined, string | undefined]> = m.transitions.flatMap((t) => t.requires.filter((f) => !m.fieldMap.get(f)!.required).map((f) => [`${t.from} → ${t.to} (${f})`, t, f] as [string, TransitionDef, string]))
    if (needing.length === 0) needing.push(['(none declared)', undefined, undefined])
    it.each(needing)('a move needing a field: %s', async (_l, t, f) => {
      if (t === undefined || f === undefined) return
      const r = await create(m, { [sf]: t.from }, true)
      expect(r[f]).toBeNull()
      const url = `/${m.path}/${r._id}`
      const others = required(t.from, t.to)
      delete others[f]
      for (const body of [{ [sf]: t.to, ...others }, { [sf]: t.to, ...others, [f]: null }]) {
        const res = await admin.put(url, body)
        expectError(res, 'DATOS_REQUERIDOS')
        expect(res.body.detalles.map((d: Rec) => d.campo)).toContain(f)
      }
      expect(ok(await admin.get(url))).toMatchObject({ [sf]: t.from, _version: 1 })
      const value = sampleValue(m.fieldMap.get(f)!, refs, ++n)
      ok(await admin.put(url, { [f]: value, ...others }))
      expectError(await admin.put(url, { [sf]: t.to, [f]: null }), 'DATOS_REQUERIDOS')
      expect(ok(await admin.put(url, { [sf]: t.to }))).toMatchObject({ [sf]: t.to, [f]: value, _version: 3 })
    })

    it('sending the current state again is no move (200, nothing changed)', async () => {
      for (const a of states(m)) {
        const r = await create(m, { [sf]: a }, true)
        expect(ok(await admin.put(`/${m.path}/${r._id}`, { [sf]: a }))).toMatchObject({ [sf]: a, _version: 2 })
        expect((await versions(m, r._id)).map((v) => [v.accion, v.campos])).toEqual([['crear', expect.any(Array)], ['editar', []]])
      }
    })
  })

  it.each(withoutMoves.map((m) => [m.name, m] as const))('%s (no declared moves) accepts every move', async (_name, m) => {
    const sf = m.stateField!
    for (const [a, b] of pairs(m)) {
      const r = await create(m, { [sf]: a }, true)
      expect(ok(await admin.put(`/${m.path}/${r._id}`, { [sf]: b })), `${a} → ${b}`).toMatchObject({ [sf]: b, _version: 2 })
    }
  })

  it('the state diagrams of docs/administrator-guide.md are those generated from modules.yaml (npm run diagrams)', () => {
    const guide = readFileSync('docs/administrator-guide.md', 'utf8')
    const [start, end] = [guide.indexOf(BEGIN), guide.indexOf(END)]
    expect(start >= 0 && end > start).toBe(true)
    expect(guide.slice(start, end + END.length)).toBe(stateSection(registry))
  })
})

// ---------------------------------------------------------------- concurrency
describe('concurrency', () => {
  const veh = mod('vehiculos')
  const url = (id: string): string => `/${veh.path}/${id}`
  const tally = (rs: Res[]): Rec => rs.reduce<Rec>((acc, r) => { const k = r.status === 200 ? '200' : `${r.status} ${r.body.error}`; acc[k] = (acc[k] ?? 0) + 1; return acc }, {})

  it('GET answers ETag "<_version>"', async () => {
    const r = await create(veh)
    ok(await admin.put(url(r._id), { marca: 'Otra' }))
    const res = await admin.get(url(r._id))
    expect(res.headers.etag).toBe(`"${String(ok(res)._version)}"`)
    expect(res.headers.etag).toBe('"2"')
  })

  type How = (v: number) => [Rec, Record<string, string> | undefined]
  it.each<[string, How]>([['_version in the body', (v) => [{ _version: v }, undefined]], ['If-Match', (v) => [{}, { 'if-match': `"${v}"` }]]])(
    '50 concurrent PUTs with the same version (%s): exactly one wins', async (_l, how) => {
      const r = await create(veh)
      ok(await admin.put(url(r._id), { marca: 'Base' }))
      const [extra, headers] = how(2)
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => admin.put(url(r._id), { marca: `M${i}`, ...extra }, headers)))
      expect(tally(results)).toEqual({ 200: 1, [outcome('CONFLICTO_VERSION')]: 49 })
      const winner = results.find((x) => x.status === 200)!.body.data
      expect(ok(await admin.get(url(r._id)))).toMatchObject({ _version: 3, marca: winner.marca })
      expect((await versions(veh, r._id)).length).toBe(3)
    })

  it('50 concurrent PUTs without a version: all succeed and none is lost', async () => {
    const r = await create(veh)
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => admin.put(url(r._id), { modelo: `Modelo ${i}` })))
    expect(tally(results)).toEqual({ 200: 50 })
    expect(new Set(results.map((x) => x.body.data._version))).toEqual(new Set(Array.from({ length: 50 }, (_, i) => i + 2)))
    expect(ok(await admin.get(url(r._id)))._version).toBe(51)
    const vs = (await versions(veh, r._id)).slice(1)
    expect(vs.map((v) => [v.accion, v.campos])).toEqual(Array(50).fill(['editar', ['modelo']]))
    expect(new Set(vs.map((v) => v.registro.modelo))).toEqual(new Set(Array.from({ length: 50 }, (_, i) => `Modelo ${i}`)))
    expect(ok(await admin.get(`${url(r._id)}/verificar`))).toEqual({ valido: true })
  })

  it('50 concurrent DELETEs: one 200, the rest 404; 50 concurrent restores: one restaurar version', async () => {
    const r = await create(veh)
    expect(tally(await Promise.all(Array.from({ length: 50 }, () => admin.del(url(r._id)))))).toEqual({ 200: 1, [outcome('REGISTRO_NO_ENCONTRADO')]: 49 })
    const restored = await Promise.all(Array.from({ length: 50 }, () => admin.post(`${url(r._id)}/restaurar`)))
    expect(tally(restored)).toEqual({ 200: 50 })
    expect(new Set(restored.map((x) => x.body.data._version))).toEqual(new Set([3]))
    expect((await versions(veh, r._id)).map((v) => v.accion)).toEqual(['crear', 'eliminar', 'restaurar'])
    expect(ok(await admin.get(`${url(r._id)}/verificar`))).toEqual({ valido: true })
  })

  it('PUT and DELETE with a stale If-Match: 409, nothing changes', async () => {
    const r = await create(veh)
    ok(await admin.put(url(r._id), { marca: 'Nueva' }))
    expectError(await admin.put(url(r._id), { marca: 'Vieja' }, { 'if-match': '"1"' }), 'CONFLICTO_VERSION')
    expectError(await admin.put(url(r._id), { marca: 'Vieja', _version: 1 }), 'CONFLICTO_VERSION')
    expectError(await admin.del(url(r._id), { 'if-match': '"1"' }), 'CONFLICTO_VERSION')
    expect(ok(await admin.get(url(r._id)))).toMatchObject({ marca: 'Nueva', _version: 2, _deleted: null })
    ok(await admin.del(url(r._id), { 'if-match': '"2"' }))
    expect((await versions(veh, r._id)).map((v) => v.accion)).toEqual(['crear', 'editar', 'eliminar'])
  })
})

// ---------------------------------------------------------------- delete and restore
describe('delete and restore', () => {
  const den = mod('denuncias')
  const url = (id: string): string => `/${den.path}/${id}`
  const stored = async (id: string): Promise<Rec> => (await h.db.query(`select "_version", "_deleted" from "${den.table}" where "_id" = $1`, [id]))[0]!

  it('DELETE bumps _version, sets _deleted and records an eliminar version; history and verification still work', async () => {
    const r = await create(den)
    ok(await admin.del(url(r._id)))
    const row = await stored(r._id)
    expect(row._version).toBe(2)
    expect(row._deleted).toBeInstanceOf(Date)
    expectError(await admin.get(url(r._id)), 'REGISTRO_NO_ENCONTRADO')
    const vs = await versions(den, r._id)
    expect(vs.map((v) => [v._version, v.accion, v.campos])).toEqual([[1, 'crear', expect.any(Array)], [2, 'eliminar', []]])
    expect(vs[1]!.registro._deleted).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    expect(ok(await admin.get(`${url(r._id)}/verificar`))).toEqual({ valido: true })
  })

  it('?incluir_eliminados=true lists it for roles holding eliminar, 403 for the others', async () => {
    const r = await create(den)
    ok(await admin.del(url(r._id)))
    expect(ok(await admin.get(`/${den.path}?_id=${r._id}`)).total).toBe(0)
    for (const rol of users.keys()) {
      const res = await as(rol).get(`/${den.path}?_id=${r._id}&incluir_eliminados=true`)
      if (!perms.can(rol, den.name, 'ver')) continue
      if (perms.can(rol, den.name, 'eliminar')) expect(ok(res), rol).toMatchObject({ total: 1, records: [{ _id: r._id, _deleted: expect.any(String), _version: 2 }] })
      else expectError(res, 'SIN_PERMISOS')
    }
    expect(['superadmin', 'administrador'].every((rol) => perms.can(rol, den.name, 'eliminar')) && !perms.can('jefe', den.name, 'eliminar')).toBe(true)
  })

  it('POST /restaurar: 403 without eliminar; 200 with the record, _deleted null, _version +1, a restaurar version', async () => {
    const r = await create(den)
    ok(await admin.del(url(r._id)))
    for (const rol of [...users.keys()].filter((x) => !perms.can(x, den.name, 'eliminar'))) {
      expectError(await as(rol).post(`${url(r._id)}/restaurar`), 'SIN_PERMISOS')
      expectError(await as(rol).post(`${url('DEN-2026-99999')}/restaurar`), 'SIN_PERMISOS')
    }
    expect((await stored(r._id))._version).toBe(2)
    const res = await as('administrador').post(`${url(r._id)}/restaurar`)
    const data = ok(res)
    expect(data).toMatchObject({ _id: r._id, _deleted: null, _version: 3, denunciante_nombre: r.denunciante_nombre })
    expect(res.headers.etag).toBe('"3"')
    expect(ok(await admin.get(url(r._id)))).toEqual(data)
    const vs = await versions(den, r._id)
    expect(vs.map((v) => [v._version, v.accion, v.campos])).toEqual([[1, 'crear', expect.any(Array)], [2, 'eliminar', []], [3, 'restaurar', []]])
    expect(vs[2]!.registro).toEqual(data)
    // restoring a live record: unchanged
    expect(ok(await admin.post(`${url(r._id)}/restaurar`))).toEqual(data)
    expect((await versions(den, r._id)).length).toBe(3)
    expect(ok(await admin.get(`${url(r._id)}/verificar`))).toEqual({ valido: true })
    // unknown or malformed ids
    expectError(await admin.post(`${url('DEN-2026-99999')}/restaurar`), 'REGISTRO_NO_ENCONTRADO')
    expectError(await admin.post(`${url('nada')}/restaurar`), 'REGISTRO_NO_ENCONTRADO')
    expectError(await admin.get(`${url('DEN-2026-99999')}/historial`), 'REGISTRO_NO_ENCONTRADO')
    expectError(await admin.get(`${url('DEN-2026-99999')}/verificar`), 'REGISTRO_NO_ENCONTRADO')
  })
})

// ---------------------------------------------------------------- read log
describe('read log of decrypted data', () => {
  const per = mod('personal')
  const den = mod('denuncias')
  const enc = (m: ModuleDef): string[] => m.fields.filter((f) => f.encrypted).map((f) => f.name)
  const logged = async (registro: string, usuario: string): Promise<Rec[]> =>
    h.db.query('select usuario, modulo, registro, campos, ruta from sys_lecturas where registro = $1 and usuario = $2 order by id', [registro, usuario])
  const lecturas = async (qs: string, api = admin): Promise<Res> => api.get(`/auditoria/lecturas${qs}`)
  let p: Rec, readerId: string

  beforeAll(async () => {
    // every encrypted field set but the last one, which stays null
    const body = sampleBody(per, refs)
    body[enc(per).at(-1)!] = null
    p = ok(await admin.post(`/${per.path}`, body), 201)
    ok(await admin.put(`/${per.path}/${p._id}`, { nombre: 'Otro nombre' }))
    expect(perms.can('jefe', per.name, 'descifrar') && !perms.can('agente', per.name, 'descifrar') && perms.can('agente', per.name, 'ver')).toBe(true)
    readerId = users.get('jefe')!.id
  })

  it('GET by id, list and historial by a role that decrypts each log the record, its non-null encrypted fields and the route', async () => {
    const campos = enc(per).slice(0, -1)
    const jefe = as('jefe')
    ok(await jefe.get(`/${per.path}/${p._id}`))
    expect(await logged(p._id, readerId)).toEqual([{ usuario: readerId, modulo: per.name, registro: p._id, campos, ruta: `GET /${per.path}/:id` }])
    ok(await jefe.get(`/${per.path}?_id=${p._id}`))
    const afterList = await logged(p._id, readerId)
    expect(afterList).toHaveLength(2)
    expect(afterList[1]).toMatchObject({ modulo: per.name, registro: p._id, campos })
    expect(afterList[1]!.ruta).toMatch(new RegExp(`^GET /${per.path}/?$`))
    ok(await jefe.get(`/${per.path}/${p._id}/historial`))
    const afterHistory = (await logged(p._id, readerId)).slice(2)
    expect(afterHistory.length).toBeGreaterThanOrEqual(1)
    for (const row of afterHistory) expect(row).toEqual({ usuario: readerId, modulo: per.name, registro: p._id, campos, ruta: `GET /${per.path}/:id/historial` })
    // and through the API, for a superadmin
    const res = ok(await lecturas(`?registro=${p._id}&usuario=${readerId}`))
    expect(res).toMatchObject({ total: 2 + afterHistory.length, limit: 100, offset: 0 })
    expect(res.records[0]).toEqual({ tipo: 'lectura', usuario: readerId, fecha: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/), modulo: per.name, registro: p._id, campos, ruta: `GET /${per.path}/:id/historial` })
    expect(res.records.at(-1).ruta).toBe(`GET /${per.path}/:id`)
  })

  it('POST and PUT responses that carry decrypted values are logged too', async () => {
    const jefe = users.get('jefe')!
    const r = ok(await jefe.api.post(`/${per.path}`, sampleBody(per, refs)), 201)
    ok(await jefe.api.put(`/${per.path}/${r._id}`, { nombre: 'Cambio' }))
    expect((await logged(r._id, jefe.id)).map((x) => [x.ruta.replace(/\/$/, ''), x.campos])).toEqual([[`POST /${per.path}`, enc(per)], [`PUT /${per.path}/:id`, enc(per)]])
  })

  it('desde and hasta are inclusive: an entry shown at second X is found with hasta=X', async () => {
    const all = ok(await lecturas(`?registro=${p._id}`))
    expect(all.total).toBeGreaterThan(0)
    expect(ok(await lecturas(`?registro=${p._id}&hasta=${encodeURIComponent(all.records[0].fecha)}`)).total).toBe(all.total)
  })

  it('reads by a masked role, and of records whose encrypted fields are all null, log nothing', async () => {
    const agente = users.get('agente')!
    for (const u of ['', '/historial']) ok(await agente.api.get(`/${per.path}/${p._id}${u}`))
    ok(await agente.api.get(`/${per.path}?_id=${p._id}`))
    expect(await logged(p._id, agente.id)).toEqual([])
    // Structured arrays with encrypted sub-fields (testigos) left empty too.
    const d = await create(den, Object.fromEntries([...enc(den), ...den.fields.filter((f) => f.items?.some((s) => s.encrypted) === true).map((f) => f.name)].map((f) => [f, null])))
    const jefe = as('jefe')
    for (const u of ['', '/historial']) ok(await jefe.get(`/${den.path}/${d._id}${u}`))
    ok(await jefe.get(`/${den.path}?_id=${d._id}`))
    expect(await h.db.query('select * from sys_lecturas where registro = $1', [d._id])).toEqual([])
  })

  it('/auditoria/lecturas: the page and its total are read in one snapshot, so the log growing meanwhile cannot split them', async () => {
    // Reads land in the log while it is listed (the console's Accesos: the officer's own); a total counted
    // apart from its page could disagree with it (docs/decisions.md "The read log's page and its total").
    const sent = (await queriesOf(app.orm.em, async () => ok(await lecturas(`?registro=${p._id}&limit=5`)))).map((q) => q.sql)
    const page = sent.findIndex((q) => /^select "id".* from "sys_lecturas"/.test(q))
    const count = sent.findIndex((q) => /^select count\(\*\).* from "sys_lecturas"/.test(q))
    expect(page).toBeGreaterThan(0)
    expect(count).toBeGreaterThan(page)
    expect(sent.slice(page - 1, count + 2)).toEqual([expect.stringMatching(/^BEGIN TRANSACTION ISOLATION LEVEL repeatable read/i), sent[page], sent[count], expect.stringMatching(/^COMMIT/i)])
  })

  it('/auditoria/lecturas: superadmin only; filters, pages, rejects unknown parameters', async () => {
    for (const rol of ['administrador', 'jefe']) expectError(await lecturas('', as(rol)), 'SIN_PERMISOS')
    const all = ok(await lecturas(`?registro=${p._id}`))
    expect(all.total).toBeGreaterThanOrEqual(3)
    expect(all.records.every((r: Rec) => r.registro === p._id)).toBe(true)
    expect(ok(await lecturas(`?registro=${p._id}&modulo=${per.name}`)).total).toBe(all.total)
    expect(ok(await lecturas(`?registro=${p._id}&modulo=${den.name}`)).total).toBe(0)
    expect(ok(await lecturas(`?usuario=${readerId}`)).records.every((r: Rec) => r.usuario === readerId)).toBe(true)
    expect(ok(await lecturas('?usuario=USR-2026-99999')).total).toBe(0)
    const range = (d: string, hh: string): string => `?registro=${p._id}&desde=${encodeURIComponent(d)}&hasta=${encodeURIComponent(hh)}`
    expect(ok(await lecturas(range('2000-01-01 00:00:00', '2100-01-01 00:00:00'))).total).toBe(all.total)
    expect(ok(await lecturas(range('2100-01-01 00:00:00', '2100-12-31 00:00:00'))).total).toBe(0)
    expect(ok(await lecturas(range('2000-01-01 00:00:00', '2000-12-31 00:00:00'))).total).toBe(0)
    expect(ok(await lecturas(`?registro=${p._id}&desde=${encodeURIComponent(all.records.at(-1).fecha)}`)).total).toBe(all.total)
    const fechas = all.records.map((r: Rec) => r.fecha as string)
    expect([...fechas].sort().reverse()).toEqual(fechas)
    const page = ok(await lecturas(`?registro=${p._id}&limit=1&offset=1`))
    expect(page).toMatchObject({ total: all.total, limit: 1, offset: 1 })
    expect(page.records).toEqual([all.records[1]])
    expect(ok(await lecturas(`?registro=${p._id}&limit=5000`)).limit).toBe(1000)
    for (const qs of ['?foo=1', '?registro=x&orden=fecha', '?limit=0', '?offset=-1', '?desde=ayer', '?hasta=2026-13-01 00:00:00']) {
      expectError(await lecturas(qs.replace(' ', '%20')), 'DATOS_INVALIDOS')
    }
  })
})

// ---------------------------------------------------------------- history masking
describe('history masking', () => {
  it.each(registry.modules.filter((m) => m.fields.some((f) => f.encrypted) && perms.can('agente', m.name, 'ver') && !perms.can('agente', m.name, 'descifrar') && perms.can('jefe', m.name, 'descifrar')).map((m) => [m.name, m] as const))(
    '%s: agente sees encrypted fields withheld in every version, jefe in plaintext', async (_n, m) => {
      const encrypted = m.fields.filter((f) => f.encrypted).map((f) => f.name)
      const r = await create(m)
      const plain = m.fields.find((f) => (f.type === 'string' || f.type === 'text') && !f.enum && !f.unique && !f.encrypted)!
      ok(await admin.put(`/${m.path}/${r._id}`, { [plain.name]: 'Cambio' }))
      // (not deleted: a deleted record's history is only for holders of eliminar, docs/operator-guide.md "History and verification")
      ok(await admin.put(`/${m.path}/${r._id}`, { [plain.name]: 'Cambio dos' }))
      const masked = await versions(m, r._id, as('agente'))
      expect(masked).toHaveLength(3)
      for (const v of masked) {
        expect(v.registro._restringidos).toEqual(withheldNames(m))
        for (const f of encrypted) expect(v.registro).not.toHaveProperty(f)
      }
      const clear = await versions(m, r._id, as('jefe'))
      expect(clear.map((v) => v._hash)).toEqual(masked.map((v) => v._hash))
      for (const v of clear) {
        expect(v.registro).not.toHaveProperty('_restringidos')
        for (const f of encrypted) expect(v.registro[f]).toEqual(r[f])
      }
    })
})
