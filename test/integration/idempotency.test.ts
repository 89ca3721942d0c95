/**
 * Idempotency-Key on creates and imports (docs/user-guide.md "Retries and
 * Idempotency-Key"): a repeat with the same key and body answers the first
 * answer and writes nothing, on any instance; another body is a 422; a
 * repeat while the first runs is a 409; only a completed 2xx is kept.
 * Through HTTP and the database, in both storage modes.
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { call, client, login, ok, sampleBody, type Api, type Res } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'
import { listenApp } from '../helpers/free-port.js'

const registry = loadRegistry('modules.yaml')
const denuncias = registry.byName.get('denuncias')!
const vehiculos = registry.byName.get('vehiculos')!

let h: Harness, app: FastifyInstance, token: string, admin: Api

beforeAll(async () => {
  ({ h, app, token, admin } = await startTestApp())
})
afterAll(async () => { await h.close() })

let keys = 0
const newKey = (): string => `clave-${process.pid}-${++keys}`
const keyed = (key: string): Record<string, string> => ({ 'idempotency-key': key })

async function rows (table: string): Promise<number> {
  const [r] = await h.db.query<{ n: number }>(`select count(*)::int as n from "${table}"`)
  return r!.n
}
async function history (id: string): Promise<number> {
  const [r] = await h.db.query<{ n: number }>('select count(*)::int as n from sys_historial where registro = $1', [id])
  return r!.n
}
const importar = (body: string, headers: Record<string, string>, t = token, on = app): Promise<Res> =>
  call(on, 'POST', '/denuncias/importar', { token: t, raw: body, headers: { 'content-type': 'application/x-ndjson', ...headers } })
const ndjson = (n: number): string => Array.from({ length: n }, () => JSON.stringify(sampleBody(denuncias, new Map(), true))).join('\n') + '\n'

describe('a create with Idempotency-Key', () => {
  it('answers a repeat with the first answer (status, body, ETag) and writes one record with one history entry; without the header, each post writes', async () => {
    const key = newKey()
    const body = sampleBody(denuncias, new Map())
    const before = await rows('denuncias')
    const first = await admin.post('/denuncias', body, keyed(key))
    const data = ok(first, 201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const second = await admin.post('/denuncias', body, keyed(key))
    expect(second.status).toBe(201)
    expect(second.body).toEqual(first.body)
    expect(second.headers.etag).toBe(first.headers.etag)
    expect(second.headers['idempotent-replayed']).toBe('true')
    // The same body with its keys in another order is the same request.
    const reordered = Object.fromEntries(Object.entries(body).reverse())
    expect((await admin.post('/denuncias', reordered, keyed(key))).body).toEqual(first.body)
    expect(await rows('denuncias')).toBe(before + 1)
    expect(await history(data._id)).toBe(1)
    // Without the header nothing changes: the same body posted twice is two records.
    const a = ok(await admin.post('/denuncias', body), 201)
    const b = ok(await admin.post('/denuncias', body), 201)
    expect(a._id).not.toBe(b._id)
    expect(await rows('denuncias')).toBe(before + 3)
  })

  it('the same key with another body, or on another route, is a 422 and writes nothing', async () => {
    const key = newKey()
    ok(await admin.post('/denuncias', sampleBody(denuncias, new Map()), keyed(key)), 201)
    const before = await rows('denuncias')
    expectError(await admin.post('/denuncias', sampleBody(denuncias, new Map()), keyed(key)), 'CLAVE_IDEMPOTENCIA_REUTILIZADA')
    expectError(await admin.post('/vehiculos', sampleBody(vehiculos, new Map()), keyed(key)), 'CLAVE_IDEMPOTENCIA_REUTILIZADA')
    expectError(await importar(ndjson(1), keyed(key)), 'CLAVE_IDEMPOTENCIA_REUTILIZADA')
    expect(await rows('denuncias')).toBe(before)
  })

  it('keys are per caller: another user\'s same key and body is a request of its own', async () => {
    const other = await newUser(app, token, 'administrador')
    const key = newKey()
    const body = sampleBody(denuncias, new Map())
    const mine = ok(await admin.post('/denuncias', body, keyed(key)), 201)
    expect(ok(await admin.post('/denuncias', body, keyed(key)), 201)._id).toBe(mine._id)
    const theirs = await call(app, 'POST', '/denuncias', { token: other.token, body, headers: keyed(key) })
    expect(ok(theirs, 201)._id).not.toBe(mine._id)
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
  })

  it('refuses a key that is empty, too long or not printable ASCII, naming the header', async () => {
    for (const bad of ['', 'x'.repeat(256), 'clave-ñ', '""']) {
      const res = await admin.post('/denuncias', sampleBody(denuncias, new Map()), keyed(bad))
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles[0].campo).toBe('Idempotency-Key')
    }
    // The draft's structured-field form ("…") is the same key as without quotes.
    const key = newKey()
    const body = sampleBody(denuncias, new Map())
    const first = ok(await admin.post('/denuncias', body, keyed(`"${key}"`)), 201)
    expect(ok(await admin.post('/denuncias', body, keyed(key)), 201)._id).toBe(first._id)
  })

  it('a first request refused (400, 409) is not kept: its retry is judged again', async () => {
    const key = newKey()
    const body = sampleBody(vehiculos, new Map())
    expectError(await admin.post('/vehiculos', { ...body, matricula: undefined }, keyed(key)), 'DATOS_REQUERIDOS')
    const taken = ok(await admin.post('/vehiculos', body), 201)
    expect(taken._id).toBeDefined()
    expectError(await admin.post('/vehiculos', body, keyed(key)), 'REGISTRO_DUPLICADO')
    const fixed = { ...body, matricula: `${String(body.matricula)}-B`, bastidor: `${String(body.bastidor)}-B` }
    const created = ok(await admin.post('/vehiculos', fixed, keyed(key)), 201)
    expect((await admin.post('/vehiculos', fixed, keyed(key))).body.data._id).toBe(created._id)
  })

  it('a first request that failed with a 5xx is not kept: its retry writes once', async () => {
    const key = newKey()
    const body = sampleBody(denuncias, new Map())
    await h.db.query(`create function idem_falla() returns trigger language plpgsql as $$ begin raise exception 'caída simulada'; end $$`)
    await h.db.query('create trigger idem_falla before insert on denuncias for each row execute function idem_falla()')
    const before = await rows('denuncias')
    let failed: Res
    try {
      failed = await admin.post('/denuncias', body, keyed(key))
    } finally {
      await h.db.query('drop trigger idem_falla on denuncias')
      await h.db.query('drop function idem_falla()')
    }
    expect(failed.status).toBeGreaterThanOrEqual(500)
    expect(await rows('denuncias')).toBe(before)
    const retry = ok(await admin.post('/denuncias', body, keyed(key)), 201)
    expect((await admin.post('/denuncias', body, keyed(key))).body.data._id).toBe(retry._id)
    expect(await rows('denuncias')).toBe(before + 1)
  })
})

describe('an import with Idempotency-Key', () => {
  it('answers a repeat with the same ids and writes the rows once', async () => {
    const key = newKey()
    const body = ndjson(3)
    const before = await rows('denuncias')
    const first = await importar(body, keyed(key))
    const done = ok(first, 201)
    expect(done.ids).toHaveLength(3)
    const second = await importar(body, keyed(key))
    expect(second.status).toBe(201)
    expect(second.body).toEqual(first.body)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(await rows('denuncias')).toBe(before + 3)
    for (const id of done.ids as string[]) expect(await history(id)).toBe(1)
    // Other bytes, or the same bytes as another type or query, are another request.
    expectError(await importar(ndjson(3), keyed(key)), 'CLAVE_IDEMPOTENCIA_REUTILIZADA')
    expectError(await call(app, 'POST', '/denuncias/importar?simular=true', { token, raw: body, headers: { 'content-type': 'application/x-ndjson', ...keyed(key) } }), 'CLAVE_IDEMPOTENCIA_REUTILIZADA')
    expect(await rows('denuncias')).toBe(before + 3)
  })

  it('a repeat while the first still runs is a 409 with Retry-After; once it ends, the repeat gets its answer', async () => {
    const key = newKey()
    const lines = ndjson(2).split('\n')
    const base = await listenApp(app)
    // A real connection: the first line sent, the body held open, so the first import runs and holds the key.
    const first = request(`${base}/denuncias/importar`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson', ...keyed(key) } })
    const answer = new Promise<{ status: number, body: string }>((resolve, reject) => {
      first.on('response', (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (c: string) => { text += c }).on('end', () => { resolve({ status: res.statusCode!, body: text }) })
      }).on('error', reject)
    })
    first.write(`${lines[0]}\n`)
    const body = `${lines[0]}\n${lines[1]}\n`
    // A repeat sent before the first holds the key would run itself: the first gets time to get through its hooks, also on a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    const busy = await importar(body, keyed(key))
    expectError(busy, 'PETICION_EN_CURSO')
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    first.end(`${lines[1]}\n`)
    const done = await answer
    expect(done.status).toBe(201)
    const repeat = await importar(body, keyed(key))
    expect(repeat.body).toEqual(JSON.parse(done.body))
  })

  it('a key held by an instance that died frees itself when its lease ends', async () => {
    // A lease long enough that the first repeat reaches the store before it ends, also on a loaded machine.
    const leased = await h.app({ env: { IDEMPOTENCY_LEASE: '2s' } })
    const caller = ok(await client(leased, token).get('/me'))
    const key = newKey()
    // A hold as a dead instance leaves it: claimed, never renewed, answered or let go.
    expect(await leased.stores.idempotency.claim(`${caller._id}:${key}`, 'instancia-caida', 2_000)).toEqual({ state: 'claimed' })
    const body = ndjson(1)
    expectError(await importar(body, keyed(key), token, leased), 'PETICION_EN_CURSO')
    await new Promise((resolve) => setTimeout(resolve, 2_200))
    expect((await importar(body, keyed(key), token, leased)).status).toBe(201)
    await h.closeApp(leased)
  })
})

describe('across instances and time', () => {
  it('a second instance on the same stores answers the first instance\'s answer', async () => {
    const other = await h.app()
    const key = newKey()
    const body = sampleBody(denuncias, new Map())
    const before = await rows('denuncias')
    const first = await admin.post('/denuncias', body, keyed(key))
    const elsewhere = await call(other, 'POST', '/denuncias', { token: await login(other), body, headers: keyed(key) })
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.body).toEqual(first.body)
    expect(elsewhere.headers['idempotent-replayed']).toBe('true')
    const lines = ndjson(2)
    const importKey = newKey()
    const imported = await importar(lines, keyed(importKey))
    expect(imported.status).toBe(201)
    const again = await importar(lines, keyed(importKey), await login(other), other)
    expect(again.body).toEqual(imported.body)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(await rows('denuncias')).toBe(before + 3)
    await h.closeApp(other)
  })

  it('after IDEMPOTENCY_TTL the key is forgotten and a repeat writes again', async () => {
    const short = await h.app({ env: { IDEMPOTENCY_TTL: '1s' } })
    const api = client(short, await login(short))
    const key = newKey()
    const body = sampleBody(denuncias, new Map())
    const first = ok(await api.post('/denuncias', body, keyed(key)), 201)
    expect(ok(await api.post('/denuncias', body, keyed(key)), 201)._id).toBe(first._id)
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect(ok(await api.post('/denuncias', body, keyed(key)), 201)._id).not.toBe(first._id)
    await h.closeApp(short)
  })
})
