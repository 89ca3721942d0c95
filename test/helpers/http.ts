/** Small HTTP helpers over app.inject, so tests read like API calls. */
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import type { FieldDef, ModuleDef, Registry } from '../../core/registry/types.js'
import { dniLetter } from '../../core/field-types/formats/dni.js'
import { ADMIN, PASSWORD } from './app.js'

export interface Res {
  status: number
  body: any
  headers: Record<string, string | string[] | number | undefined>
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'

/**
 * A request over the network reaches an instance through its event loop's
 * I/O, so after whatever Redis announced before the request was sent (the
 * changes that drop an instance's copies, stores/admission.ts); an injected
 * one would not wait for them: two turns of the loop let them in. Only
 * Redis announces anything (the in-process stores have no copies).
 */
async function ioTurns (app: FastifyInstance): Promise<void> {
  if (app.stores.kind !== 'redis') return
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve))
}

/** One request through app.inject; `ip` is the client address (default 127.0.0.1). */
export async function call (app: FastifyInstance, method: Method, url: string, opts: { token?: string, body?: unknown, headers?: Record<string, string>, raw?: string, ip?: string } = {}): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  let payload: string | undefined
  if (opts.raw !== undefined) payload = opts.raw
  else if (opts.body !== undefined) { payload = JSON.stringify(opts.body); headers['content-type'] ??= 'application/json' }
  await ioTurns(app)
  const res = await app.inject({ method, url, headers, ...(payload !== undefined && { payload }), ...(opts.ip !== undefined && { remoteAddress: opts.ip }) })
  let body: unknown
  try { body = res.json() } catch { body = res.body }
  return { status: res.statusCode, body, headers: res.headers }
}

export type Api = ReturnType<typeof client>

export function client (app: FastifyInstance, token?: string) {
  const t = token === undefined ? {} : { token }
  return {
    get: (url: string, headers?: Record<string, string>) => call(app, 'GET', url, { ...t, ...(headers && { headers }) }),
    post: (url: string, body?: unknown, headers?: Record<string, string>) => call(app, 'POST', url, { ...t, ...(body !== undefined && { body }), ...(headers && { headers }) }),
    put: (url: string, body?: unknown, headers?: Record<string, string>) => call(app, 'PUT', url, { ...t, ...(body !== undefined && { body }), ...(headers && { headers }) }),
    del: (url: string, headers?: Record<string, string>) => call(app, 'DELETE', url, { ...t, ...(headers && { headers }) }),
  }
}

export async function login (app: FastifyInstance, username = ADMIN.username, password = ADMIN.password): Promise<string> {
  const res = await call(app, 'POST', '/auth/login', { body: { username, password } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.token as string
}

/** The `data` of a successful answer, after checking its status (the body is shown when it differs). */
export function ok (res: { status: number, body: any }, status = 200): any {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  return res.body.data
}

let sampleCounter = 0

/** A DNI with its right check letter (format: dni), from a number below 100,000,000. */
export function validDni (n: number): string {
  return `${String(n).padStart(8, '0')}${dniLetter(n)}`
}

/** A valid value for a field; refs come from `refs` (module name → id). */
export function sampleValue (f: FieldDef, refs: Map<string, string>, n: number): unknown {
  switch (f.type) {
    case 'string': {
      if (f.enum !== undefined) return f.enum[0]
      if (f.name === 'username') return `user${n}x${process.pid}`
      if (f.format === 'dni') return validDni(10_000_000 + n)
      if (f.format === 'telefono') return `+346${String(n).padStart(8, '0').slice(-8)}`
      const s = `${f.name.slice(0, 8)}-${n}`
      return s.slice(0, f.maxLength ?? 500).padEnd(f.minLength ?? 0, 'x')
    }
    case 'text': return `Texto de ${f.name} ${n}`
    case 'integer': return Math.max(f.min ?? 1, Math.min(f.max ?? 100, 3))
    case 'decimal': return Math.max(f.min ?? 0, 12.5)
    case 'boolean': return true
    case 'date': return '2026-03-15'
    case 'datetime': return '2026-03-15 10:30:00'
    case 'time': return '08:30'
    // A structured array (docs/user-guide.md "Structured arrays"): one item with every sub-field.
    case 'array': return f.items === undefined ? ['uno', { nombre: 'Testigo', telefono: '600000000' }] : [Object.fromEntries(f.items.map((s) => [s.name, sampleValue(s, refs, n)]))]
    case 'ref': return refs.get(f.ref!)
    case 'password': return PASSWORD
    // Files arrive by upload (docs/user-guide.md "Evidence files"); a body may hold URL strings of old.
    case 'file': return ['https://intranet.example/documento.pdf']
  }
}

/** What `_restringidos` names for a caller without descifrar: the encrypted fields, then encrypted sub-fields by path (docs/user-guide.md "Structured arrays"). */
export function withheldNames (mod: ModuleDef): string[] {
  const paths = (f: FieldDef): string[] => (f.items ?? []).filter((s) => s.encrypted).map((s) => `${f.name}.${s.name}`)
  return [...mod.fields.filter((f) => f.encrypted).map((f) => f.name), ...mod.fields.flatMap(paths)]
}

/** A body with every declared field set (`requiredOnly`: just the required ones). */
export function sampleBody (mod: ModuleDef, refs: Map<string, string>, requiredOnly = false): Record<string, unknown> {
  const n = ++sampleCounter
  const body: Record<string, unknown> = {}
  for (const f of mod.fields) {
    if (requiredOnly && !f.required) continue
    const v = sampleValue(f, refs, n)
    if (v !== undefined) body[f.name] = v
  }
  return mod.subscriptions ? { ...body, ...subscriptionSample(mod, requiredOnly) } : body
}

/**
 * The fields of a webhook subscription whose generic sample would be
 * refused (docs/user-guide.md "Webhooks (suscripciones)"): a url on the
 * loopback discard port (tests allow private targets, test/helpers/app.ts),
 * its own module as the one subscribed to and a filter on it, a role
 * of the real modules.yaml, a valid secret.
 */
function subscriptionSample (mod: ModuleDef, requiredOnly: boolean): Record<string, unknown> {
  const required = { url: 'http://127.0.0.1:9/webhook', modulos: [mod.name], rol: 'superadmin' }
  return requiredOnly ? required : { ...required, tipos: [`${mod.name}.creado`], filtro: 'activa=true', activa: false, secreto: `whsec_${Buffer.alloc(32, 5).toString('base64')}` }
}

/** Modules in an order where every ref target comes before the modules pointing at it. */
export function refOrder (registry: Registry): ModuleDef[] {
  const done = new Set<string>()
  const out: ModuleDef[] = []
  const visit = (m: ModuleDef): void => {
    if (done.has(m.name)) return
    done.add(m.name)
    for (const f of m.fields) if (f.ref !== undefined && f.ref !== m.name) visit(registry.byName.get(f.ref)!)
    out.push(m)
  }
  registry.modules.forEach(visit)
  return out
}
