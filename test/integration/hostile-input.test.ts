/**
 * Hostile input, property-based (issue 3 item 7): generated bodies, raw
 * payloads, content types, query strings and path ids thrown at every
 * module's endpoints. Whatever arrives, the answer is never a 5xx, always the
 * error envelope, and a 4xx never writes: the table (POST) or the record (PUT)
 * is exactly as before, and a list query changes no table at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { ERRORS } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import type { Harness } from '../helpers/app.js'
import { refOrder, sampleBody } from '../helpers/http.js'
import { CODE_BY_TEXT, expectError, statusByText } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

const registry = loadRegistry('modules.yaml')
const MODULES = refOrder(registry)
const RUNS = { post: 80, put: 50, raw: 40, query: 80, ids: 50 }
const MiB = 1024 * 1024

/** docs/user-guide.md "Errors": every 4xx text a client may get here, with its status. */
const ERROR_STATUS = statusByText(['DATOS_REQUERIDOS', 'DATOS_INVALIDOS', 'JSON_MAL_FORMADO', 'REGISTRO_NO_ENCONTRADO', 'RUTA_NO_ENCONTRADA', 'MODULO_NO_ENCONTRADO',
  'CONFLICTO_VERSION', 'REGISTRO_DUPLICADO', 'TRANSICION_NO_PERMITIDA', 'PETICION_DEMASIADO_GRANDE', 'TIPO_CONTENIDO_NO_SOPORTADO'])

let h: Harness, app: FastifyInstance, token: string
const refs = new Map<string, string>()
/** One live record per module: the target of PUT and the source of refs. */
const targets = new Map<string, string>()

beforeAll(async () => {
  ({ h, app, token } = await startTestApp())
  for (const mod of MODULES) {
    const res = await send('POST', `/${mod.path}`, JSON.stringify(sampleBody(mod, refs)))
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    refs.set(mod.name, res.body.data._id)
    targets.set(mod.name, res.body.data._id)
  }
})
afterAll(async () => { await h?.close() })

interface Res { status: number, body: any, type: string }

async function send (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: string | Buffer, contentType: string | null = 'application/json', extra: Record<string, string> = {}): Promise<Res> {
  const headers: Record<string, string> = { ...extra, authorization: `Bearer ${token}` }
  if (payload !== undefined && contentType !== null) headers['content-type'] = contentType
  const res = await app.inject({ method, url, headers, ...(payload !== undefined && { payload }) })
  let body: unknown
  try { body = res.json() } catch { body = res.body }
  return { status: res.statusCode, body, type: String(res.headers['content-type'] ?? '') }
}

/** Never a 5xx; a 4xx is exactly `{success: false, error, codigo, detalles?}` with an error text of that status and its code; a 2xx is `{success: true, data}`. */
function envelope (res: Res): void {
  const shown = `${res.status} ${JSON.stringify(res.body)?.slice(0, 400)}`
  expect(res.status, shown).toBeLessThan(500)
  expect(res.type, shown).toMatch(/^application\/json/)
  expect(typeof res.body === 'object' && res.body !== null && !Array.isArray(res.body), shown).toBe(true)
  const { success, error, codigo, detalles, data, ...rest } = res.body as Record<string, unknown>
  expect(rest, shown).toEqual({})
  if (res.status >= 400) {
    expect(success, shown).toBe(false)
    expect(codigo, shown).toBe(CODE_BY_TEXT[error as string])
    expect(data, shown).toBeUndefined()
    expect(ERROR_STATUS[error as string], shown).toBe(res.status)
    if (detalles !== undefined) {
      expect(Array.isArray(detalles) && detalles.length > 0, shown).toBe(true)
      for (const d of detalles as unknown[]) expect(d, shown).toEqual({ campo: expect.any(String), mensaje: expect.any(String) })
    }
  } else {
    expect([success, error, codigo, detalles], shown).toEqual([true, undefined, undefined, undefined])
    expect(data, shown).toBeDefined()
  }
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined()
}

const count = async (mod: ModuleDef): Promise<number> => (await h.db.query<{ n: number }>(`select count(*)::int as n from "${mod.table}"`))[0]!.n
const live = async (mod: ModuleDef): Promise<number> => (await h.db.query<{ n: number }>(`select count(*)::int as n from "${mod.table}" where "_deleted" is null`))[0]!.n
const stored = async (mod: ModuleDef, id: string): Promise<Record<string, unknown>> => (await h.db.query(`select * from "${mod.table}" where "_id" = $1`, [id]))[0]!
/** Every table's name and every module table's full content, as one comparable value. */
async function fingerprint (): Promise<unknown> {
  const tables = (await h.db.query<{ t: string }>("select table_name as t from information_schema.tables where table_schema = 'public' order by 1")).map((r) => r.t)
  const contents: unknown[] = []
  for (const m of MODULES) contents.push(await h.db.query(`select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t."_id"), '')) as h from "${m.table}" t`))
  return { tables, contents }
}

// ---------- generators ----------

const CONTROL = ['\u0000', '\u0007', '\u001b', '\u007f', '\u000b', '\u0008', '\u001f']
const LONE = ['"\\ud800"', '"a\\udfffb"', '"\\udc00\\ud800"', '"ok\\ud83d"', '["\\udfff"]', '[{"n":"\\ud800"}]', '[{"\\ud800":"k"}]']
const NUMBERS = ['1e308', '-1e308', '1e999', '-1e999', '-0', '-0.0', '0.001', '0.005', '1e-9', '2147483647', '2147483648', '-2147483649',
  '9007199254740993', '123456789012.345', '999999999999.99', '1000000000000', '0.1', '0.29', '1.0', '1E2', '-1', '16', '15']
/** Calendar edge cases: impossible days, the Madrid DST gap and fold, year bounds, offsets that leave years 1–9999. */
const DATE_TEXT = ['2026-02-30', '2026-03-29 02:30:00', '2026-10-25 02:30:00', '2026-13-01', '0000-01-01', '2024-02-29', '2026-02-29', '9999-12-31',
  '0001-01-01', '0001-01-01 00:00:00', '9999-12-31 23:59:59', '9999-12-31T23:59:59-23:59', '0001-01-01T00:00:00+23:59', '2026-03-15T10:00:00+24:00',
  '2026-03-15T10:00:00.123456789Z', '2026-03-15T25:00:00Z', '24:00', '23:59', '00:00', '7:05', '2026-03-15 10:30', ' 2026-03-15',
  '2026-03-15\n', '+002026-03-15', '２０２６-03-15', '2026-03-15 10:30:00.5', 'now']
const DATES = DATE_TEXT.map((s) => JSON.stringify(s))
const WRONG = ['null', 'true', 'false', '0', '1.5', '"texto"', '""', '" "', '[]', '{}', '[1,2]', '{"a":1}', '"PER-2026-99999"', '"DEN-2026-00001"',
  '"PER-2026-0000000000000000000000000000000000001"', '"SAN-2026-00001"']
const ARRAYS = ['[{"__proto__":{"polluted":true}}]', '[{"constructor":{"prototype":{"polluted":true}}}]', '["ok\\u0000"]', '[{"k\\u0007":"v"}]',
  '[null]', '[[]]', '[1.5,true,"x"]', '[{"a":{"b":{"c":{"d":1}}}}]', '[{"a":{"b":{"c":1}}}]', `[${JSON.stringify('x'.repeat(2001))}]`,
  `[${JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])))}]`, '[{"a":1e999}]']
const KEYS = ['"__proto__"', '"constructor"', '"prototype"', '"toString"', '"hasOwnProperty"', '"_id"', '"_version"', '"_deleted"', '"_hash"',
  '"_created_by"', '"\\ud800"', '"a\\u0000"', '""', '"estado "', '"TIPO"', '"compa\\u00f1ero"']
const nested = (d: number, open: string, close: string, leaf: string): string => `[${open.repeat(d)}${leaf}${close.repeat(d)}]`

/** Raw JSON text of a value that is wrong (or just barely right) for field f. */
function hostileValue (f: FieldDef): fc.Arbitrary<string> {
  const max = f.maxLength ?? 500
  const items = f.maxItems ?? 200
  const typed = ['date', 'datetime', 'time'].includes(f.type) ? DATES : ['integer', 'decimal'].includes(f.type) ? NUMBERS : f.type === 'array' ? ARRAYS : [...LONE, ...WRONG]
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...typed) },
    fc.constantFrom(...WRONG, ...NUMBERS, ...DATES, ...LONE, ...ARRAYS),
    fc.tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...CONTROL), fc.string({ maxLength: 4 })).map(([a, c, b]) => JSON.stringify(a + c + b)),
    fc.constantFrom('x', '😀', 'é').chain((c) => fc.constantFrom(max - 1, max, max + 1).map((n) => JSON.stringify(c.repeat(n)))),
    fc.constantFrom(items, items + 1, 20_000).map((n) => JSON.stringify(Array(n).fill('x'))),
    fc.integer({ min: 1, max: 40 }).chain((d) => fc.constantFrom(nested(d, '[', ']', '1'), nested(d, '{"a":', '}', '1'))),
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s)),
  )
}

type Edit = { op: 'set', field: string, raw: string } | { op: 'drop', field: string } | { op: 'extra', key: string, raw: string }
type Plan = { edits: Edit[] } | { raw: string }

function planArb (mod: ModuleDef): fc.Arbitrary<Plan> {
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...mod.fields).chain((f) => hostileValue(f).map((raw): Edit => ({ op: 'set', field: f.name, raw }))) },
    { weight: 1, arbitrary: fc.constantFrom(...mod.fields).map((f): Edit => ({ op: 'drop', field: f.name })) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('extra' as const), key: fc.oneof(fc.constantFrom(...KEYS, ...mod.fields.map((f) => JSON.stringify(f.name))), fc.string().map((s) => JSON.stringify(s))), raw: fc.constantFrom('1', '"x"', '{"prototype":{"polluted":true}}', '{"polluted":true}', 'null') }) },
  )
  const whole = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.object().map((v) => JSON.stringify(v)),
    fc.anything().map((v) => { try { return JSON.stringify(v) } catch { return undefined } }).filter((s): s is string => typeof s === 'string'),
    fc.constantFrom('{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '[]', 'null', '"x"', '0',
      `${'['.repeat(200_000)}${']'.repeat(200_000)}`, `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`),
  )
  return fc.oneof({ weight: 4, arbitrary: fc.array(edit, { minLength: 1, maxLength: 3 }).map((edits) => ({ edits })) }, { weight: 1, arbitrary: whole.map((raw) => ({ raw })) })
}

/** The request text of a plan: a fresh valid body (fresh unique values) with the edits applied as raw JSON. */
function render (plan: Plan, base: Record<string, unknown>): string {
  if ('raw' in plan) return plan.raw
  const pairs = new Map<string, string>(Object.entries(base).map(([k, v]) => [JSON.stringify(k), JSON.stringify(v)]))
  const extra: string[] = []
  for (const e of plan.edits) {
    if (e.op === 'set') pairs.set(JSON.stringify(e.field), e.raw)
    else if (e.op === 'drop') pairs.delete(JSON.stringify(e.field))
    else extra.push(`${e.key}:${e.raw}`) // may repeat a declared key: JSON.parse keeps the last
  }
  return `{${[...[...pairs].map(([k, v]) => `${k}:${v}`), ...extra].join(',')}}`
}

/** A short valid PUT body: one plain field (no state move, no unique value). */
function smallUpdate (mod: ModuleDef): Record<string, unknown> {
  const f = mod.fields.find((x) => !x.required && !x.unique && !x.encrypted && x.name !== mod.stateField && x.type !== 'ref' && x.type !== 'password' && x.type !== 'array')!
  return { [f.name]: sampleBody(mod, refs)[f.name] }
}

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-8']
const OTHER_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonp',
  'application/json-patch+json', 'application/vnd.api+json', 'text/json', 'application/octet-stream', ';', 'json', 'application/', '*/*']
const isJsonType = (ct: string): boolean => ct.split(';')[0]!.trim().toLowerCase() === 'application/json'
const BROKEN = ['{', '{"a":', '{"tipo":"x",}', "{'a':1}", 'NaN', 'undefined', '\uFEFF{}', '{"a":1}{"b":2}', '[1,]', '01', '"\\x41"',
  '{"a":"\\u00zz"}', '\u0000', '{"a":1}\u0000', 'tru', '{"a" 1}', '/* c */ {}', '{"a":1e}', '  ', '\n']

const enc = (s: string): string => encodeURIComponent(s.toWellFormed())
const BAD_PCT = ['%', '%%', '%zz', '%E0%A4%A', '%ED%A0%80', '%FF%FE', '%C0%AF', '%00', '%0A', '%2F', '%2e%2e', '%5B%5D', '%u0041']

describe.each(MODULES.map((m) => [m.name, m] as const))('module %s', (_name, mod) => {
  const base = `/${mod.path}`
  // Always tried first: instants outside years 1–9999 once the offset is applied (a datetime field, if the module has one).
  const when = mod.fields.find((f) => f.type === 'datetime')
  const bodyExamples: Array<[Plan]> = when === undefined ? [] : ['"9999-12-31T23:59:59-23:59"', '"0001-01-01T00:00:00+23:59"'].map((raw) => [{ edits: [{ op: 'set', field: when.name, raw }] }])
  const names = [...mod.fields.map((f) => f.name), '_id', '_created', '_created_by', '_modified', '_modified_by', '_version']

  it('a) POST: generated and mutated bodies → error envelope, never 5xx; a 4xx writes no row, a 2xx exactly one', async () => {
    await fc.assert(fc.asyncProperty(planArb(mod), async (plan) => {
      const before = await count(mod)
      const res = await send('POST', base, render(plan, sampleBody(mod, refs)))
      envelope(res)
      expect(await count(mod), `${res.status} ${JSON.stringify(res.body)}`).toBe(before + (res.status < 300 ? 1 : 0))
      if (res.status < 300) expect(res.status).toBe(201)
    }), { numRuns: RUNS.post, examples: bodyExamples })
  })

  it('b) PUT: the same bodies against a live record → error envelope; a 4xx leaves the stored row untouched', async () => {
    const id = targets.get(mod.name)!
    const ifMatch: fc.Arbitrary<string | undefined> = fc.option(fc.constantFrom('"1"', '*', 'W/"1"', '"-1"', 'x', '"1", "2"', '"9999999999"', '""'), { nil: undefined })
    await fc.assert(fc.asyncProperty(planArb(mod), ifMatch, async (plan, im) => {
      const before = await stored(mod, id)
      const res = await send('PUT', `${base}/${id}`, render(plan, smallUpdate(mod)), 'application/json', im === undefined ? {} : { 'if-match': im })
      envelope(res)
      const after = await stored(mod, id)
      if (res.status >= 400) expect(after, `${res.status} ${JSON.stringify(res.body)}`).toEqual(before)
      else expect([res.status, after._version]).toEqual([200, (before._version as number) + 1])
    }), { numRuns: RUNS.put, examples: bodyExamples.map(([p]): [Plan, string | undefined] => [p, undefined]) })
  })

  it('c) raw payloads and content types: 400 JSON mal formado / 415 / 413, never a write', async () => {
    const id = targets.get(mod.name)!
    const payload = fc.oneof(
      fc.constantFrom(...BROKEN).map((s) => Buffer.from(s)),
      fc.string({ unit: 'binary', maxLength: 60 }).map((s) => Buffer.from(s)),
      fc.uint8Array({ minLength: 1, maxLength: 80 }).map((a) => Buffer.from(a)),
      fc.tuple(fc.jsonValue(), fc.nat()).map(([v, n]) => { const s = JSON.stringify(v); return Buffer.from(s.slice(0, n % Math.max(1, s.length))) }),
    )
    const ctype = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...JSON_TYPES) }, { weight: 2, arbitrary: fc.constantFrom(...OTHER_TYPES) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).filter((s) => /^[\x21-\x7e][\x20-\x7e]*$/.test(s) && !s.endsWith(' ')) })
    await fc.assert(fc.asyncProperty(payload, ctype, fc.boolean(), async (buf, ct, put) => {
      const [n, row] = [await count(mod), await stored(mod, id)]
      const res = await send(put ? 'PUT' : 'POST', put ? `${base}/${id}` : base, buf, ct)
      envelope(res)
      expect(res.status).toBeGreaterThanOrEqual(400)
      const text = buf.toString('utf8')
      // An empty payload under a foreign type: either "no body" or the type's 415 is a fair answer.
      if (!isJsonType(ct)) expect((text === '' ? [ERRORS.DATOS_REQUERIDOS, ERRORS.TIPO_CONTENIDO_NO_SOPORTADO] : [ERRORS.TIPO_CONTENIDO_NO_SOPORTADO]).map((e) => e.message)).toContain(res.body.error)
      else if (text.trim() === '') expect(res.body.error).toBe(ERRORS.DATOS_REQUERIDOS.message)
      else {
        let parses = true
        try { JSON.parse(text) } catch { parses = false }
        if (!parses) expect(res.body.error).toBe(ERRORS.JSON_MAL_FORMADO.message)
      }
      expect([await count(mod), await stored(mod, id)]).toEqual([n, row])
    }), { numRuns: RUNS.raw })

    // 1 MiB exactly is accepted (a valid body padded with spaces); one byte more is 413, counted in bytes.
    const valid = JSON.stringify(sampleBody(mod, refs))
    const n = await count(mod)
    const exact = await send('POST', base, valid + ' '.repeat(MiB - Buffer.byteLength(valid)))
    expect(exact.status, JSON.stringify(exact.body)).toBe(201)
    for (const [method, url] of [['POST', base], ['PUT', `${base}/${id}`]] as const) {
      for (const body of [valid + ' '.repeat(MiB + 1 - Buffer.byteLength(valid)), JSON.stringify({ x: 'é'.repeat(MiB / 2 + 1) })]) {
        const res = await send(method, url, body)
        envelope(res)
        expectError(res, 'PETICION_DEMASIADO_GRANDE')
      }
      const plain = await send(method, url, 'x'.repeat(MiB + 1), 'text/plain')
      envelope(plain)
      expect([413, 415]).toContain(plain.status)
    }
    expect(await count(mod)).toBe(n + 1)
  })

  it('d) list queries: generated filters, operators, injection-shaped values, paging and sort garbage → never 5xx, no table changed', async () => {
    const key = fc.tuple(
      fc.oneof(fc.constantFrom(...names, 'limit', 'offset', 'sort', 'incluir_eliminados', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'tip o', ''), fc.string({ maxLength: 8 })),
      fc.oneof(fc.constantFrom('', '[gt]', '[gte]', '[lt]', '[lte]', '[ne]', '[in]', '[contiene]', '[eq]', '[$ne]', '[regex]', '[]', '[gt][lt]', '[GT]', '[', ']', '[__proto__]', '[constructor]'), fc.string({ maxLength: 6 }).map((s) => `[${s}]`)),
    ).map(([k, op]) => enc(k + op))
    const kind = (n: string): string => mod.fieldMap.get(n)?.type ?? ({ _created: 'datetime', _modified: 'datetime', _version: 'integer' } as Record<string, string>)[n] ?? 'string'
    const QNUM = ['9999999999', '2147483648', '-2147483649', '99999999999999', '999999999999.99', '1.005', '-0', '1e3', '0x10', ' 1', '', 'NaN']
    // A field with a value of its own type's edge cases (dates, numbers), under any operator.
    const typedPair = fc.constantFrom(...names).chain((n) => fc.tuple(
      fc.constantFrom('', '[gt]', '[gte]', '[lt]', '[lte]', '[ne]', '[in]', '[contiene]').map((op) => enc(n + op)),
      fc.constantFrom(...(['date', 'datetime', 'time'].includes(kind(n)) ? DATE_TEXT : ['integer', 'decimal'].includes(kind(n)) ? QNUM : ["' OR 1=1 --", '%', '_', '\\'])).map(enc)))
    const value = fc.oneof(
      fc.constantFrom("' OR 1=1 --", '%', '_', '\\', '"; drop table x; --', "'); drop table usuarios; --", '*', '.*', '$ne', '{"$gt":""}',
        'null', 'true', '9999999999', '2147483648', '-2147483649', '99999999999999', '1e3', '0x10', ' 1', '-0', '1.005', '2026-02-30',
        '2026-03-29 02:30:00', '9999-12-31 23:59:59', '0001-01-01', '24:00', 'a,b,c', Array(101).fill('x').join(','), 'x'.repeat(501), 'é'.repeat(500),
        '-_created', '_id,-_id', 'descripcion', '0', '1001', '-1', '1.5', '').map(enc),
      fc.string({ unit: 'binary', maxLength: 30 }).map(enc),
      fc.constantFrom(...BAD_PCT),
      fc.tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...CONTROL)).map(([s, c]) => enc(s + c)),
    )
    const query = fc.array(fc.oneof(fc.tuple(key, value), typedPair), { minLength: 1, maxLength: 4 }).chain((pairs) =>
      fc.boolean().map((repeat) => (repeat ? [...pairs, pairs[0]!] : pairs).map(([k, v]) => `${k}=${v}`).join('&')))
    const before = await fingerprint()
    await fc.assert(fc.asyncProperty(query, async (qs) => {
      const res = await send('GET', `${base}?${qs}`)
      envelope(res)
      if (res.status < 300) {
        const d = res.body.data
        expect(Array.isArray(d.records)).toBe(true)
        expect(Number.isInteger(d.total) && d.total >= 0).toBe(true)
        expect(Number.isInteger(d.limit) && d.limit >= 1 && d.limit <= 1000).toBe(true)
        expect(d.records.length).toBeLessThanOrEqual(d.limit)
      } else expect([400, 403, 404]).toContain(res.status)
    }), { numRuns: RUNS.query, examples: [['__proto__=x'], ['valueOf='], ['constructor=x'], [`_created=${enc('0001-01-01T00:00:00+23:59')}`], [`_modified[lt]=${enc('9999-12-31T23:59:59-23:59')}`]] })
    expect(await fingerprint()).toEqual(before)
  })

  it('e) path ids: random and malformed ids on GET/PUT/DELETE → 400 or 404, nothing changes', async () => {
    const prefixes = MODULES.map((m) => m.prefix)
    const id = fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(enc),
      fc.string({ minLength: 1, maxLength: 20 }).map(enc),
      fc.constantFrom(...BAD_PCT, '..', '.', 'x'.repeat(300), "'%20OR%201=1%20--", '%22%3B%20drop%20table%20x%3B%20--'),
      fc.tuple(fc.constantFrom(...prefixes, mod.prefix.toLowerCase()), fc.constantFrom('2026', '0000', '99999', '1'), fc.stringMatching(/^9\d{5,30}$/))
        .map(([p, y, s]) => `${p}-${y}-${s}`),
      fc.constantFrom(`${mod.prefix}-2026-1`, `${mod.prefix}-2026-00001%20`, `%20${mod.prefix}-2026-00001`, `${mod.prefix}-2026-00001%00`, `${mod.prefix}-2026-00001/x`),
    ).filter((s) => s.replace(/[/.]|%2e/gi, '') !== '')
    const before = await fingerprint()
    const method = fc.constantFrom('GET', 'PUT', 'DELETE') as fc.Arbitrary<'GET' | 'PUT' | 'DELETE'>
    // Mostly /{module}/{id}; sometimes the same text as an unknown first segment or with an unknown tail.
    const url = fc.tuple(id, fc.constantFrom('id', 'id', 'root', 'tail')).map(([p, s]) => s === 'id' ? `${base}/${p}` : s === 'root' ? `/${p}` : `${base}/${p}/x`)
    await fc.assert(fc.asyncProperty(url, method, async (u, m) => {
      const n = await live(mod)
      const res = await send(m, u, m === 'PUT' ? JSON.stringify(smallUpdate(mod)) : undefined)
      envelope(res)
      expect([400, 404], `${m} ${u} → ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status)
      expect(await live(mod)).toBe(n)
    }), { numRuns: RUNS.ids, examples: [[`${base}/%`, 'GET'], [`${base}/%E0%A4%A`, 'PUT'], [`${base}/${'x'.repeat(201)}`, 'DELETE'], ['/%zz', 'GET']] })
    expect(await fingerprint()).toEqual(before)
  })
})
