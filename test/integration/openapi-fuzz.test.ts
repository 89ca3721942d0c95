/**
 * A fuzz run generated from the service's own OpenAPI document (docs/user-guide.md "Errors",
 * docs/user-guide.md "API explorer and OpenAPI document"; docs/operator-guide.md "Hostile input"): every path and method it lists, with path ids of every shape,
 * query parameters (those the document declares, plus filters named after
 * the properties of each module's record schema, with every operator) and
 * request bodies built from the document's body schemas — valid-ish, then
 * mutated: wrong types, missing and extra keys, huge strings, odd Unicode,
 * out-of-range numbers, broken JSON, foreign content types. Sent as an
 * admin, as each other role, with a bad token and with none.
 *
 * Properties, for each of FUZZ_RUNS requests (2,000 in `npm test`, 10,000 in
 * `npm run test:long`; seed fixed):
 * never a 5xx; every answer in the error envelope (`{success: false, error,
 * detalles?}` with the text of its status, or `{success: true, data}`);
 * a 4xx writes nothing: no row of any module table, of the history, the
 * read log or the sessions is inserted, updated or deleted (counted by
 * database triggers, so the targeted record is covered too). Failures are
 * collected and shown together.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { call, refOrder, sampleBody } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { CODE_BY_TEXT, statusByText } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 2_000)
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123)
const registry = loadRegistry('modules.yaml')

/** docs/user-guide.md "Errors": every text a client may get, with its status. */
const ERROR_STATUS = statusByText(['DATOS_REQUERIDOS', 'DATOS_INVALIDOS', 'JSON_MAL_FORMADO', 'TOKEN_NO_PROPORCIONADO', 'TOKEN_INVALIDO',
  'CREDENCIALES_INVALIDAS', 'SIN_PERMISOS', 'REGISTRO_NO_ENCONTRADO', 'MODULO_NO_ENCONTRADO', 'RUTA_NO_ENCONTRADA', 'CONFLICTO_VERSION',
  'REGISTRO_DUPLICADO', 'TRANSICION_NO_PERMITIDA', 'PETICION_DEMASIADO_GRANDE', 'TIPO_CONTENIDO_NO_SOPORTADO', 'DEMASIADAS_PETICIONES',
  'METODO_NO_PERMITIDO'])

type Schema = Record<string, any>
interface Operation { method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, op: Schema, module?: string }
interface Req { method: Operation['method'], url: string, caller: string, payload?: string, contentType?: string }

let h: Harness
let app: FastifyInstance
let admin: string
let doc: Schema
/** Caller name → Authorization header value (undefined: none). */
const callers = new Map<string, string | undefined>()
/** Module name → ids of its live seed records (targets of path ids and refs). */
const ids = new Map<string, string[]>()
/** Users the fuzzer acts as: never a path target, so a write cannot lock the fuzzer out. */
const callerIds = new Set<string>()

beforeAll(async () => {
  ({ h, app, token: admin } = await startTestApp())
  callers.set('admin', `Bearer ${admin}`)
  for (const rol of ['jefe', 'oficial', 'agente', 'consulta']) {
    const u = await newUser(app, admin, rol)
    callers.set(rol, `Bearer ${u.token}`)
    callerIds.add(u.id)
  }
  callers.set('none', undefined)
  callers.set('bad token', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJVU1ItMjAyNi0wMDAwMSJ9.x')
  const me = await call(app, 'GET', '/me', { token: admin })
  callerIds.add(me.body.data._id)
  const refs = new Map<string, string>()
  for (const mod of refOrder(registry)) {
    for (let i = 0; i < 3; i++) {
      const res = await call(app, 'POST', `/${mod.path}`, { token: admin, body: sampleBody(mod, refs) })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      refs.set(mod.name, res.body.data._id)
      ids.set(mod.name, [...(ids.get(mod.name) ?? []), res.body.data._id])
    }
  }
  const res = await app.inject({ method: 'GET', url: '/docs/json' })
  doc = (res.statusCode === 200 ? res : await app.inject({ method: 'GET', url: '/docs' })).json()
})
afterAll(async () => { await h?.close() })

// ---------- the document ----------

function resolve (s: Schema | undefined): Schema {
  let x = s ?? {}
  for (let i = 0; i < 10 && typeof x.$ref === 'string'; i++) {
    x = x.$ref.split('/').slice(1).reduce((o: Schema, k: string) => o?.[decodeURIComponent(k)], doc) ?? {}
  }
  return x
}

function operations (): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'delete'].includes(method)) continue
      // A live stream never ends, which app.inject waits for: its refusals are driven in test/integration/event-stream.test.ts.
      if ((op as Schema).responses?.['200']?.content?.['text/event-stream'] !== undefined) continue
      const segment = path.split('/')[1]!
      const module = registry.byPath.get(segment)?.name
      out.push({ method: method.toUpperCase() as Operation['method'], path, op, ...(module !== undefined && { module }) })
    }
  }
  return out
}

/** The properties of the record schema a list operation answers with (filters and sort keys). */
function listProperties (op: Schema): Record<string, Schema> {
  const ok = resolve(op.responses?.['200']?.content?.['application/json']?.schema)
  const data = resolve(ok.properties?.data)
  const records = resolve(data.properties?.records)
  return resolve(records.items).properties ?? {}
}

// ---------- values ----------

const ODD = ['\u0000', '\ud800', '\udfff', '\u202e', '\ufeff', '😀', 'é', 'e\u0301', '\u0007', '\n', '\\', '"', "'", '%', '_', '*', '🇪🇸', '\u2028', 'ﬀ', 'İ']
const oddString = fc.array(fc.oneof(fc.constantFrom(...ODD), fc.string({ maxLength: 3 })), { maxLength: 12 }).map((xs) => xs.join(''))
const hugeString = fc.constantFrom(501, 2001, 20_001, 100_000).chain((n) => fc.constantFrom('x', 'é', '😀').map((c) => c.repeat(n)))
const junk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 0.001, 2 ** 31, -(2 ** 31) - 1, 1e308, '', ' ', 'null', '[]', {}, [], [null], { a: 1 }, 'PER-2026-99999', 'USR-2026-00001',
    '2026-02-29', '0999-12-31', '10000-01-01', '2026-03-29 02:30:00', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00', '24:00', '7:05') },
  { weight: 3, arbitrary: oddString },
  { weight: 1, arbitrary: hugeString },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
)

const types = (s: Schema): string[] => (Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]).filter((t: string) => t !== 'null')

/** A value the schema accepts, or nearly: seed ids for id patterns, real dates for date shapes. */
function valid (raw: Schema | undefined): fc.Arbitrary<unknown> {
  const s = resolve(raw)
  if (Array.isArray(s.enum)) {
    const values = s.enum.filter((v: unknown) => v !== null)
    if (values.length > 0) return fc.constantFrom(...values)
  }
  const t = types(s)[0]
  if (t === 'string') {
    const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern) : undefined
    const known = [...ids.values()].flat().filter((id) => pattern?.test(id) === true)
    if (known.length > 0) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, fc.stringMatching(pattern!, { maxLength: 20 }))
    if (s.pattern === '^\\d{4}-\\d{2}-\\d{2}$') return fc.constantFrom('2026-03-15', '1000-01-01', '9999-12-31', '2024-02-29')
    if (s.pattern === '^\\d{2}:\\d{2}$') return fc.constantFrom('08:30', '00:00', '23:59')
    if (/HH:MM:SS/.test(String(s.description ?? ''))) return fc.constantFrom('2026-03-15 10:30:00', '2026-06-01T10:00:00Z', '1000-01-01 00:00:00', '9999-12-31 23:59:59')
    // Room for a pattern's bounded repeats (a webhook secret takes 38 characters at least).
    if (pattern !== undefined) return fc.stringMatching(pattern, { maxLength: Math.min(s.maxLength ?? 100, 100) })
    const min = Math.max(s.minLength ?? 0, 1)
    return fc.string({ minLength: min, maxLength: Math.max(min, Math.min(s.maxLength ?? 30, 30)) }).map((x) => x.replace(/[\u0000-\u001f]/g, 'x'))
  }
  // A range around the declared bounds, never empty (a year field's minimum is above 1000).
  const low = Math.max(s.minimum ?? -1000, -1e6)
  const high = Math.max(low, Math.min(s.maximum ?? Math.max(1000, low + 1000), 1e6))
  if (t === 'integer') return fc.integer({ min: low, max: high })
  if (t === 'number') return fc.integer({ min: low * 100, max: high * 100 }).map((n) => n / 100)
  if (t === 'boolean') return fc.boolean()
  if (t === 'array') return fc.array(fc.oneof(fc.string({ maxLength: 10 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 })), { maxLength: 3 })
  if (t === 'object' || s.properties !== undefined) return objectArb(s)
  return junk
}

/** An object of the schema: its required keys and some optional ones. */
function objectArb (s: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties ?? {}) as Record<string, Schema>
  const required = (s.required ?? []) as string[]
  const model = Object.fromEntries(Object.entries(props).filter(([, p]) => !p.readOnly).map(([k, p]) => [k, valid(p)]))
  return fc.record(model, { requiredKeys: required.filter((k) => k in model) }) as fc.Arbitrary<Record<string, unknown>>
}

type Edit = (o: Record<string, unknown>) => string | Record<string, unknown>

/** Mutations of a valid-ish body; some return raw text (numbers a double cannot hold, broken JSON). */
function edits (s: Schema): fc.Arbitrary<Edit> {
  const keys = Object.keys(s.properties ?? {})
  const key = keys.length > 0 ? fc.constantFrom(...keys) : fc.constant('x')
  return fc.oneof(
    key.chain((k) => junk.map((v): Edit => (o) => ({ ...o, [k]: v }))),
    key.map((k): Edit => (o) => { const c = { ...o }; delete c[k]; return c }),
    key.map((k): Edit => (o) => ({ ...o, [k]: null })),
    fc.tuple(fc.oneof(fc.constantFrom('_version', '_id', '_deleted', 'desconocido', 'TIPO', '', ' ', 'constructor', 'toString'), oddString), junk).map(([k, v]): Edit => (o) => ({ ...o, [k]: v })),
    fc.tuple(key, fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '1E+309', `1${'0'.repeat(400)}`)).map(([k, n]): Edit => (o) => JSON.stringify({ ...o, [k]: 0 }).replace(`${JSON.stringify(k)}:0`, `${JSON.stringify(k)}:${n}`)),
    key.map((k): Edit => (o) => JSON.stringify({ ...o, [k]: '\u0000' }).replace('\\u0000', '\\ud800')),
    fc.constantFrom<Edit>((o) => JSON.stringify(o).slice(0, -1), (o) => `${JSON.stringify(o)},`, (o) => JSON.stringify(o).replace(/"/, "'"), () => '', () => 'null', () => '[]',
      (o) => `{"__proto__":{"x":1},${JSON.stringify(o).slice(1)}`, (o) => JSON.stringify([o]), () => `${'['.repeat(40)}${']'.repeat(40)}`),
  )
}

function bodyArb (s: Schema): fc.Arbitrary<{ payload: string, contentType: string }> {
  const text = fc.oneof(
    { weight: 5, arbitrary: objectArb(s).map((o) => JSON.stringify(o)) },
    { weight: 5, arbitrary: fc.tuple(objectArb(s), fc.array(edits(s), { minLength: 1, maxLength: 3 })).map(([o, es]) => {
      let cur: string | Record<string, unknown> = o
      for (const e of es) cur = typeof cur === 'string' ? cur : e(cur)
      return typeof cur === 'string' ? cur : JSON.stringify(cur)
    }) },
    { weight: 1, arbitrary: fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v)), fc.string({ unit: 'binary', maxLength: 40 })) },
  )
  const contentType = fc.oneof({ weight: 12, arbitrary: fc.constant('application/json') }, fc.constantFrom('text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'APPLICATION/JSON'))
  return fc.record({ payload: text, contentType })
}

const enc = (v: string): string => encodeURIComponent(v.toWellFormed())
/** A generated value as query text; objects as JSON (fast-check makes some without a prototype, which String() refuses). */
const asText = (v: unknown): string => typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)
const OPERATORS = ['', '[ne]', '[gt]', '[gte]', '[lt]', '[lte]', '[in]', '[contiene]', '[vacio]', '[eq]', '[x]', '[]']

function queryArb (o: Operation): fc.Arbitrary<string> {
  const declared = ((o.op.parameters ?? []) as Schema[]).map(resolve).filter((p) => p.in === 'query')
  const props = o.method === 'GET' && o.path.split('/').length === 2 ? listProperties(o.op) : {}
  const names = [...new Set([...declared.map((p) => p.name as string), ...Object.keys(props), 'limit', 'offset', 'sort', 'q', 'incluir_eliminados'])]
  // A parameter sent as JSON text (an any-of group) has its schema under content.
  const schemaOf = (n: string): Schema => {
    const p = declared.find((x) => x.name === n)
    return resolve(p?.schema ?? p?.content?.['application/json']?.schema ?? props[n])
  }
  const pair = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...names).chain((n) => fc.tuple(fc.constantFrom(...OPERATORS).map((op) => n + op), fc.oneof(valid(schemaOf(n)).map(asText), junk.map(asText).map((v) => v.slice(0, 3000))))) },
    fc.tuple(fc.constantFrom('limit', 'offset'), fc.constantFrom('0', '1', '1000', '1001', '-1', '1.5', 'abc', '', '9'.repeat(30))),
    fc.tuple(fc.constant('sort'), fc.array(fc.constantFrom(...names.map((n) => n), ...names.map((n) => `-${n}`), 'x', '--_id', ''), { maxLength: 3 }).map((xs) => xs.join(','))),
    fc.tuple(oddString, oddString),
  )
  return fc.array(pair, { maxLength: 4 }).map((ps) => ps.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&'))
}

function idArb (module: string | undefined): fc.Arbitrary<string> {
  const own = (ids.get(module ?? '') ?? []).filter((id) => !callerIds.has(id))
  const all = [...ids.values()].flat().filter((id) => !callerIds.has(id))
  const prefix = registry.byName.get(module ?? '')?.prefix ?? 'XXX'
  return fc.oneof(
    { weight: 6, arbitrary: own.length > 0 ? fc.constantFrom(...own) : fc.constant(`${prefix}-2026-00001`) },
    fc.constantFrom(...all),
    fc.constantFrom(`${prefix}-2026-99999`, `${prefix}-2026-1`, `${prefix.toLowerCase()}-2026-00001`, `${prefix}-0000-00000`, `${prefix}-2026-${'9'.repeat(40)}`),
    oddString.filter((s) => s !== '').map(enc),
    fc.constantFrom('%', '%zz', '%00', '..', '%2e%2e', 'x'.repeat(300), '%ED%A0%80', "'%20OR%201=1--", '🦄'),
  )
}

function requestArb (o: Operation): fc.Arbitrary<Req> {
  // A logout revokes the caller's token: only callers without a live one send it.
  const caller = /logout/.test(o.path)
    ? fc.constantFrom('none', 'bad token')
    : fc.oneof({ weight: 6, arbitrary: fc.constant('admin') }, fc.constantFrom(...[...callers.keys()].filter((c) => c !== 'admin')))
  const id = o.path.includes('{') ? idArb(o.module) : fc.constant('')
  const bodySchema = resolve(o.op.requestBody?.content?.['application/json']?.schema)
  const body = o.op.requestBody !== undefined ? fc.option(bodyArb(bodySchema), { freq: 12, nil: undefined }) : fc.option(bodyArb({}), { freq: 1, nil: undefined })
  return fc.record({ caller, id, query: fc.option(queryArb(o), { freq: o.method === 'GET' ? 1 : 6, nil: undefined }), body }).map(({ caller, id, query, body }) => {
    const path = o.path.replace(/\{[^}]+\}/g, id)
    return {
      method: o.method,
      url: query === undefined || query === '' ? path : `${path}?${query}`,
      caller,
      ...(body !== undefined && { payload: body.payload, contentType: body.contentType }),
    }
  })
}

// ---------- the database side ----------

/**
 * A write counter kept by the database itself: a row trigger on every module
 * table and on history, read log and sessions adds one to
 * `fuzz_escrituras` for each row inserted, updated or deleted (and is
 * rolled back with its transaction). Reading it is one cheap query, so every
 * request is checked; a 4xx must leave it unchanged.
 */
async function installWriteCounter (): Promise<void> {
  await h.db.query('create table fuzz_escrituras (n bigint not null)')
  await h.db.query('insert into fuzz_escrituras values (0)')
  await h.db.query('create function fuzz_contar () returns trigger language plpgsql as $$ begin update fuzz_escrituras set n = n + 1; return null; end $$')
  for (const table of [...registry.modules.map((m) => m.table), 'sys_historial', 'sys_lecturas', 'sys_sesiones']) {
    await h.db.query(`create trigger fuzz_contar after insert or update or delete on "${table}" for each row execute function fuzz_contar()`)
  }
}
const writes = async (): Promise<number> => Number((await h.db.query<{ n: string }>('select n from fuzz_escrituras'))[0]!.n)

/** What is wrong with an answer (undefined: nothing). */
function envelopeProblem (status: number, type: string, body: unknown, downloads: ReadonlySet<string>): string | undefined {
  if (status >= 500) return 'a 5xx'
  // A download the document declares for a 200 (an export's CSV or NDJSON, docs/user-guide.md "Export (exportar)").
  if (status === 200 && downloads.has(type.split(';')[0]!)) return undefined
  if (!/^application\/json/.test(type)) return `content type ${type}`
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'not an object'
  const { success, error, codigo, detalles, data, ...rest } = body as Record<string, unknown>
  if (Object.keys(rest).length > 0) return `extra keys ${Object.keys(rest).join(',')}`
  if (status >= 400) {
    if (success !== false || data !== undefined) return 'error without success: false'
    if (codigo !== CODE_BY_TEXT[error as string]) return `codigo ${String(codigo)} beside "${String(error)}"`
    if (ERROR_STATUS[error as string] !== status) return `text "${String(error)}" is not the error table's for ${status}`
    if (detalles !== undefined && (!Array.isArray(detalles) || detalles.length === 0 || detalles.length > 20 ||
      !detalles.every((d) => typeof d === 'object' && d !== null && Object.keys(d).sort().join() === 'campo,mensaje' && typeof d.campo === 'string' && typeof d.mensaje === 'string'))) return 'bad detalles'
    return undefined
  }
  if (success !== true || data === undefined || error !== undefined || codigo !== undefined || detalles !== undefined) return 'success without data'
  return undefined
}

describe('OpenAPI-driven fuzz', () => {
  it(`${RUNS} generated requests over every operation of /docs: no 5xx, error envelope, no write on a 4xx`, async () => {
    await installWriteCounter()
    const ops = operations()
    expect(ops.length).toBeGreaterThan(registry.modules.length * 8)
    const downloads = new Set(ops.flatMap((o) => Object.keys(o.op.responses?.['200']?.content ?? {})).filter((t) => t !== 'application/json'))
    // Every operation gets its share; the order is shuffled by the same seed.
    const perOpN = Math.ceil(RUNS / ops.length)
    const requests = ops.flatMap((o, i) => fc.sample(requestArb(o), { seed: SEED + i, numRuns: perOpN }))
    const order = fc.sample(fc.shuffledSubarray(requests.map((_, i) => i), { minLength: requests.length }), { seed: SEED, numRuns: 1 })[0]!
    const failures: string[] = []
    const seen = new Map<string, number>()
    let last = await writes()
    for (const i of order.slice(0, Math.max(RUNS, 1))) {
      const r = requests[i]!
      const auth = callers.get(r.caller)
      const res = await app.inject({
        method: r.method,
        url: r.url,
        headers: { ...(auth !== undefined && { authorization: auth }), ...(r.payload !== undefined && { 'content-type': r.contentType! }) },
        ...(r.payload !== undefined && { payload: r.payload }),
      })
      let body: unknown
      try { body = res.json() } catch { body = res.body.slice(0, 200) }
      const shown = (): string => `${r.caller} ${r.method} ${r.url.slice(0, 200)} ${r.payload?.slice(0, 200) ?? ''} → ${res.statusCode} ${JSON.stringify(body)?.slice(0, 300)}`
      const problem = envelopeProblem(res.statusCode, String(res.headers['content-type'] ?? ''), body, downloads)
      if (problem !== undefined) failures.push(`${problem}: ${shown()}`)
      const now = await writes()
      if (res.statusCode >= 400 && now !== last) failures.push(`a ${res.statusCode} wrote ${now - last} rows: ${shown()}`)
      // The counter sees writes: every create and update moves it.
      if ((res.statusCode === 201 || (r.method === 'PUT' && res.statusCode === 200)) && now === last) failures.push(`a write the counter did not see: ${shown()}`)
      last = now
      const k = `${res.statusCode}`
      seen.set(k, (seen.get(k) ?? 0) + 1)
      if (failures.length >= 20) break
    }
    expect(failures, failures.join('\n\n')).toEqual([])
    // The run reached both sides: successes and refusals of several kinds.
    expect([...seen.keys()].sort(), JSON.stringify(Object.fromEntries(seen))).toEqual(expect.arrayContaining(['200', '201', '400', '401', '403', '404']))
  }, 600_000)
})
