/**
 * The document is the contract (docs/user-guide.md "API explorer and
 * OpenAPI document"; SPEC S16): real traffic through Stoplight Prism
 * (`prism proxy --errors`) in front of a listening service, covering every
 * route of the document, every filter parameter (so every operator) of
 * every list, and every error status the service can be driven to. Any
 * request or answer the document does not describe is a violation: Prism
 * answers it with an error and names it in `sl-violations`, and the tour
 * fails. The tour reads the document's operations and fails when one has
 * no step: a new route is one line in STEPS. `npm run test:contract`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify } from 'csv-stringify/sync'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login, refOrder, sampleBody } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { startPrism, type Proxy } from './prism.js'
import { sampleFor } from './samples.js'
import { listenApp } from '../helpers/free-port.js'

type Schema = Record<string, any>
const registry = loadRegistry('modules.yaml')

/** One request of the tour and the status it must get. */
interface Request {
  method: string
  path: string
  query?: Record<string, string | string[]>
  body?: unknown
  /** A body sent as is (a content type of its own, an oversized body). */
  raw?: { text: string, type: string }
  headers?: Record<string, string>
  /** No Authorization header; `as` another token. */
  token?: 'none' | 'invalid' | 'limited' | 'dpo'
  status: number
  /** The document refuses the request itself: Prism answers 422 naming this status, the service is not asked. */
  refusedByDocument?: true
}

/** What a step may read: the ids created so far, by module, and the versions. */
interface Tour {
  ids: Map<string, string>
  versions: Map<string, number>
  doc: Schema
  users: { id: string, username: string }
  /** The id of the last file uploaded to each module (docs/user-guide.md "Evidence files"). */
  files: Map<string, { campo: string, id: string }>
}

type Step = (t: Tour, mod: ModuleDef) => Request[]

/**
 * One request per query parameter of a module's GET at `suffix` (the list,
 * and any route taking the list's filters): the parameter's own example,
 * else a value its schema accepts (samples.ts). The admin may decrypt (a
 * blind-index filter) and see deleted records.
 */
const everyParameter = (t: Tour, mod: ModuleDef, suffix = '', id?: string, alongside: readonly string[] = []): Request[] => {
  const documented = `/${mod.path}${suffix}`
  const path = id === undefined ? documented : documented.replace('{id}', id)
  const params = (t.doc.paths[documented].get.parameters as Schema[]).filter((p) => p.in === 'query')
  const valueOf = (p: Schema): Record<string, string | string[]> => {
    // A parameter sent as JSON text (an any-of group, docs/user-guide.md "Any-of filters (o[N])") has its schema under content.
    const json = p.content?.['application/json'] as Schema | undefined
    const schema = (p.schema ?? json?.schema) as Schema
    // Only o[1] carries the groups' example (the explorer would send every one); o[2] … o[9] take it too.
    const sibling = json !== undefined && json.example === undefined && p.example === undefined ? params.find((x) => x.content?.['application/json']?.schema?.$ref === schema.$ref && (x.example ?? x.content['application/json'].example) !== undefined) : undefined
    const value = (p.example ?? json?.example ?? sibling?.example ?? sibling?.content?.['application/json']?.example ?? schema.example ?? schema.examples?.[0] ?? sampleFor(schema, registry, t.ids)) as string | string[] | Schema | undefined
    if (value === undefined) throw new Error(`no sample value for ${documented} ?${p.name}: give the parameter an example (${JSON.stringify(schema)})`)
    return { [p.name]: json !== undefined || (typeof value === 'object' && !Array.isArray(value)) ? JSON.stringify(value) : Array.isArray(value) ? value : String(value) }
  }
  // Parameters another one's example depends on (a summary's sort names a measure of medidas) go with each.
  const others = Object.assign({}, ...params.filter((p) => alongside.includes(p.name)).map(valueOf))
  return params.map((p) => ({ method: 'GET', path, query: { ...others, ...valueOf(p) }, status: 200 }))
}

/** Rows for an import (docs/user-guide.md "Import (importar)"): NDJSON lines, or a CSV with a header, arrays as JSON text. */
const ndjson = (rows: Array<Record<string, unknown>>): { text: string, type: string } =>
  ({ text: rows.map((r) => JSON.stringify(r)).join('\n') + '\n', type: 'application/x-ndjson' })
const csv = (rows: Array<Record<string, unknown>>, delimiter = ','): { text: string, type: string } => {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))]
  const cell = (v: unknown): string => v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)
  return { text: stringify([names, ...rows.map((r) => names.map((n) => cell(r[n])))], { delimiter }), type: 'text/csv' }
}

const id = (t: Tour, mod: ModuleDef): string => t.ids.get(mod.name)!
const version = (t: Tour, mod: ModuleDef): string => `"${t.versions.get(mod.name)!}"`
const missing = (mod: ModuleDef): string => `${mod.prefix}-2026-99999`
const fileField = (mod: ModuleDef): string => mod.fields.find((f) => f.type === 'file')!.name
/** A field the admin may change on any module: the first optional one that is not a ref, a password or unique. */
const changeable = (mod: ModuleDef): Record<string, unknown> => {
  const f = mod.fields.find((x) => !x.required && x.type !== 'ref' && x.type !== 'password' && !x.unique && x.type !== 'array' && x.type !== 'file')!
  return { [f.name]: sampleBody(mod, new Map())[f.name] ?? null }
}

/**
 * Every operation of the document, `METHOD /path` with `{module}` for the
 * operations every module has, in the order the tour runs them. A route
 * the document gains needs a line here (the tour fails without one).
 */
const STEPS: Record<string, Step> = {
  'GET /health': () => [{ method: 'GET', path: '/health', status: 200 }],
  'POST /auth/login': () => [
    { method: 'POST', path: '/auth/login', body: { username: 'admin', password: 'admin-password-123' }, status: 200 },
    // The console's login: the device value also set as an HttpOnly cookie (docs/user-guide.md "Accounts and sessions").
    { method: 'POST', path: '/auth/login', body: { username: 'admin', password: 'admin-password-123', recordar_dispositivo: true }, status: 200 },
    { method: 'POST', path: '/auth/login', body: { username: 'admin', password: 'no-es-la-contraseña' }, status: 401 },
  ],
  'GET /me': () => [
    { method: 'GET', path: '/me', status: 200 },
    { method: 'GET', path: '/me', token: 'invalid', status: 401 },
  ],
  'GET /me/modulos': () => [
    { method: 'GET', path: '/me/modulos', status: 200 },
    { method: 'GET', path: '/me/modulos', token: 'limited', status: 200 },
    { method: 'GET', path: '/me/modulos', token: 'none', status: 401 },
  ],
  'GET /directorio': (t) => [
    { method: 'GET', path: '/directorio', query: { ids: [...t.ids.values()].join(',') }, status: 200 },
    { method: 'GET', path: '/directorio', query: { ids: 'PER-2026-99999' }, token: 'limited', status: 200 },
    { method: 'GET', path: '/directorio', query: { ids: Array.from({ length: 201 }, (_, i) => `PER-2026-${i}`).join(',') }, status: 400 },
    { method: 'GET', path: '/directorio', query: { ids: 'PER-2026-00001' }, token: 'none', status: 401 },
  ],
  'POST /{module}': (t, mod) => {
    // With an Idempotency-Key, the repeat is answered the first answer (docs/user-guide.md "Retries and Idempotency-Key").
    const keyed = { method: 'POST', path: `/${mod.path}`, body: sampleBody(mod, t.ids), headers: { 'Idempotency-Key': `tour-${mod.name}` }, status: 201 }
    return [{ method: 'POST', path: `/${mod.path}`, body: sampleBody(mod, t.ids), status: 201 }, keyed, keyed]
  },
  'POST /{module}/importar': (t, mod): Request[] => [
    { method: 'POST', path: `/${mod.path}/importar`, query: { simular: 'true' }, raw: csv([sampleBody(mod, t.ids), sampleBody(mod, t.ids)]), status: 200 },
    { method: 'POST', path: `/${mod.path}/importar`, query: { simular: 'true', separador: ';' }, raw: csv([sampleBody(mod, t.ids)], ';'), status: 200 },
    { method: 'POST', path: `/${mod.path}/importar`, raw: ndjson([sampleBody(mod, t.ids)]), status: 201 },
    { method: 'POST', path: `/${mod.path}/importar`, raw: csv([sampleBody(mod, t.ids)]), status: 201 },
    // A row without its required fields: nothing is written, the report says why.
    { method: 'POST', path: `/${mod.path}/importar`, raw: ndjson([sampleBody(mod, t.ids), {}]), status: 400 },
  ],
  'GET /{module}/{id}': (t, mod) => [
    { method: 'GET', path: `/${mod.path}/${id(t, mod)}`, status: 200 },
    // campos without _version: a partial record and no ETag; expandir: the related records.
    ...everyParameter(t, mod, '/{id}', id(t, mod)),
    { method: 'GET', path: `/${mod.path}/${id(t, mod)}`, query: { campos: '_id' }, status: 200 },
    { method: 'GET', path: `/${mod.path}/${missing(mod)}`, status: 404 },
  ],
  'GET /{module}': (t, mod) => [
    { method: 'GET', path: `/${mod.path}`, query: { limit: '5', offset: '0', sort: '-_created,_id', incluir_eliminados: 'true' }, status: 200 },
    ...everyParameter(t, mod),
  ],
  'GET /{module}/resumen': (t, mod) => [{ method: 'GET', path: `/${mod.path}/resumen`, status: 200 }, ...everyParameter(t, mod, '/resumen', undefined, ['agrupar', 'medidas'])],
  'GET /{module}/exportar': (t, mod) => [
    { method: 'GET', path: `/${mod.path}/exportar`, query: { formato: 'ndjson' }, status: 200 },
    { method: 'GET', path: `/${mod.path}/exportar`, query: { formato: 'csv', separador: ';' }, status: 200 },
    ...everyParameter(t, mod, '/exportar'),
  ],
  'PUT /{module}/{id}': (t, mod) => [
    { method: 'PUT', path: `/${mod.path}/${id(t, mod)}`, body: changeable(mod), headers: { 'If-Match': version(t, mod) }, status: 200 },
    { method: 'PUT', path: `/${mod.path}/${id(t, mod)}`, body: changeable(mod), headers: { 'If-Match': '"999"' }, status: 409 },
  ],
  // A text file (Prism passes a binary body on as text); then its download, a range of it, and a range past its end.
  'POST /{module}/{id}/archivos/{campo}': (t, mod) => [
    { method: 'POST', path: `/${mod.path}/${id(t, mod)}/archivos/${fileField(mod)}`, query: { nombre: 'nota.txt' }, raw: { text: 'Nota de la inspección ocular', type: 'text/plain' }, status: 201 },
  ],
  // Encrypted files too (decrypted from the start, docs/user-guide.md "Evidence files").
  'GET /{module}/{id}/archivos/{campo}/{archivo}': (t, mod) => {
    const path = `/${mod.path}/${id(t, mod)}/archivos/${fileField(mod)}/${t.files.get(mod.name)!.id}`
    return [
      { method: 'GET', path, status: 200 },
      { method: 'GET', path, headers: { Range: 'bytes=0-3' }, status: 206 },
      { method: 'GET', path, headers: { Range: 'bytes=9999-' }, status: 416 },
    ]
  },
  'GET /{module}/{id}/archivos/{campo}/{archivo}/custodia': (t, mod) => [
    { method: 'GET', path: `/${mod.path}/${id(t, mod)}/archivos/${fileField(mod)}/${t.files.get(mod.name)!.id}/custodia`, status: 200 },
  ],
  'GET /{module}/{id}/historial': (t, mod) => [{ method: 'GET', path: `/${mod.path}/${id(t, mod)}/historial`, status: 200 }],
  'GET /{module}/{id}/verificar': (t, mod) => [{ method: 'GET', path: `/${mod.path}/${id(t, mod)}/verificar`, status: 200 }],
  'GET /{module}/{id}/documento': (t, mod) => [{ method: 'GET', path: `/${mod.path}/${id(t, mod)}/documento`, status: 200 }],
  // A code of the right shape that this deployment did not sign, and a text that is no code (test/integration/documents.test.ts verifies real ones).
  'POST /documentos/verificar': () => [
    { method: 'POST', path: '/documentos/verificar', body: { codigo: `DEN-2026-00001.1.${'A'.repeat(154)}` }, token: 'none', status: 200 },
    { method: 'POST', path: '/documentos/verificar', body: { codigo: 'DEN-2026-00001' }, token: 'none', status: 400 },
  ],
  'DELETE /{module}/{id}': (t, mod) => [
    { method: 'DELETE', path: `/${mod.path}/${id(t, mod)}`, headers: { 'If-Match': '"999"' }, status: 409 },
    { method: 'DELETE', path: `/${mod.path}/${id(t, mod)}`, headers: { 'If-Match': version(t, mod) }, status: 200 },
  ],
  'POST /{module}/{id}/restaurar': (t, mod) => [{ method: 'POST', path: `/${mod.path}/${id(t, mod)}/restaurar`, status: 200 }],
  'POST /usuarios/{id}/desbloquear': (t) => [{ method: 'POST', path: `/usuarios/${t.users.id}/desbloquear`, status: 200 }],
  'POST /usuarios/{id}/cerrar-sesiones': (t) => [{ method: 'POST', path: `/usuarios/${t.users.id}/cerrar-sesiones`, status: 200 }],
  'GET /suscripciones/{id}/entregas': (t) => [{ method: 'GET', path: `/suscripciones/${t.ids.get('suscripciones')}/entregas`, query: { limit: '10', offset: '0' }, status: 200 }],
  'POST /suscripciones/{id}/reanudar': (t) => [{ method: 'POST', path: `/suscripciones/${t.ids.get('suscripciones')}/reanudar`, status: 200 }],
  'POST /suscripciones/{id}/reproducir': (t) => [{ method: 'POST', path: `/suscripciones/${t.ids.get('suscripciones')}/reproducir`, body: { desde: 1 }, status: 200 }],
  // The data-protection officer erases the denuncia the tour made; then nothing is left (409); a superadmin may not (403).
  'POST /proteccion-datos/{modulo}/{id}/suprimir': (t) => {
    const path = `/proteccion-datos/denuncias/${t.ids.get('denuncias')}/suprimir`
    const body = { motivo: 'Plazo de conservación cumplido' }
    return [
      { method: 'POST', path, body, token: 'dpo', status: 200 },
      { method: 'POST', path, body, token: 'dpo', status: 409 },
      { method: 'POST', path, body, status: 403 },
      { method: 'POST', path: '/proteccion-datos/denuncia/DEN-2026-00001/suprimir', body, token: 'dpo', status: 404 },
      { method: 'POST', path, body: { motivo: '  ' }, token: 'dpo', status: 400 },
    ]
  },
  'GET /proteccion-datos/interesado': () => [
    { method: 'GET', path: '/proteccion-datos/interesado', query: { dni: '12345678Z' }, token: 'dpo', status: 200 },
    { method: 'GET', path: '/proteccion-datos/interesado', query: { dni: '12345678A' }, token: 'dpo', status: 400 },
    { method: 'GET', path: '/proteccion-datos/interesado', query: { dni: '12345678Z' }, status: 403 },
  ],
  'GET /proteccion-datos/interesado/documento': () => [
    { method: 'GET', path: '/proteccion-datos/interesado/documento', query: { dni: '12345678Z' }, token: 'dpo', status: 200 },
    { method: 'GET', path: '/proteccion-datos/interesado/documento', query: { dni: '12345678A' }, token: 'dpo', status: 400 },
    { method: 'GET', path: '/proteccion-datos/interesado/documento', query: { dni: '12345678Z' }, status: 403 },
  ],
  // The retention review, and the officer's decisions on the tour's sanción (a module with conservacion and personal data).
  'POST /proteccion-datos/revision': () => [
    { method: 'POST', path: '/proteccion-datos/revision', token: 'dpo', status: 200 },
    { method: 'POST', path: '/proteccion-datos/revision', status: 403 },
  ],
  'GET /proteccion-datos/revision': (): Request[] => [
    { method: 'GET', path: '/proteccion-datos/revision', query: { modulo: 'sanciones', limit: '10' }, token: 'dpo', status: 200 },
    { method: 'GET', path: '/proteccion-datos/revision', query: { modulo: 'vehiculos' }, token: 'dpo', status: 400 },
    { method: 'GET', path: '/proteccion-datos/revision', status: 403 },
  ],
  'POST /proteccion-datos/{modulo}/{id}/prolongar': (t) => {
    const path = `/proteccion-datos/sanciones/${t.ids.get('sanciones')}/prolongar`
    return [
      { method: 'POST', path, body: { motivo: 'Recurso pendiente', hasta: '2099-01-01' }, token: 'dpo', status: 200 },
      { method: 'POST', path, body: { motivo: 'Recurso pendiente', hasta: '2020-01-01' }, token: 'dpo', status: 400 },
      { method: 'POST', path, body: { motivo: 'Recurso pendiente', hasta: '2099-01-01' }, status: 403 },
      { method: 'POST', path: '/proteccion-datos/sanciones/SAN-2026-99999/prolongar', body: { motivo: 'x', hasta: '2099-01-01' }, token: 'dpo', status: 404 },
      { method: 'POST', path: `/proteccion-datos/atestados/${t.ids.get('atestados')}/prolongar`, body: { motivo: 'x', hasta: '2099-01-01' }, token: 'dpo', status: 409 },
    ]
  },
  'POST /proteccion-datos/{modulo}/{id}/bloquear': (t) => {
    const path = `/proteccion-datos/sanciones/${t.ids.get('sanciones')}/bloquear`
    return [
      { method: 'POST', path, body: { motivo: 'Pendiente de supresión' }, token: 'dpo', status: 200 },
      { method: 'POST', path, body: { motivo: 'Pendiente de supresión' }, token: 'dpo', status: 409 },
      { method: 'POST', path, body: { motivo: '   ' }, token: 'dpo', status: 400 },
      { method: 'POST', path, body: { motivo: 'x' }, status: 403 },
      { method: 'POST', path: '/proteccion-datos/sanciones/SAN-2026-99999/bloquear', body: { motivo: 'x' }, token: 'dpo', status: 404 },
    ]
  },
  'POST /proteccion-datos/{modulo}/{id}/desbloquear': (t) => {
    const path = `/proteccion-datos/sanciones/${t.ids.get('sanciones')}/desbloquear`
    return [
      { method: 'POST', path, body: { motivo: 'Bloqueada por error' }, token: 'dpo', status: 200 },
      { method: 'POST', path, body: { motivo: 'Bloqueada por error' }, token: 'dpo', status: 409 },
      { method: 'POST', path, body: { motivo: '   ' }, token: 'dpo', status: 400 },
      { method: 'POST', path, body: { motivo: 'x' }, status: 403 },
      { method: 'POST', path: '/proteccion-datos/sanciones/SAN-2026-99999/desbloquear', body: { motivo: 'x' }, token: 'dpo', status: 404 },
    ]
  },
  'GET /proteccion-datos/decisiones': (t): Request[] => [
    { method: 'GET', path: '/proteccion-datos/decisiones', query: { modulo: 'sanciones', id: t.ids.get('sanciones')!, limit: '10' }, status: 200 },
    { method: 'GET', path: '/proteccion-datos/decisiones', query: { modulo: 'denuncia' }, token: 'dpo', status: 400 },
    { method: 'GET', path: '/proteccion-datos/decisiones', token: 'limited', status: 403 },
  ],
  'GET /auditoria/lecturas': () => [{ method: 'GET', path: '/auditoria/lecturas', query: { limit: '10' }, status: 200 }],
  'POST /auditoria/puntos-control': () => [{ method: 'POST', path: '/auditoria/puntos-control', status: 200 }],
  // A stream does not end by itself, so the tour drives its refusals (test/integration/event-stream.test.ts reads the stream).
  'GET /eventos': (): Request[] => [
    { method: 'GET', path: '/eventos', query: { modulos: 'sala092', tipos: 'borrado' }, status: 400 },
    { method: 'GET', path: '/eventos', query: { modulos: 'usuarios' }, token: 'limited', status: 403 },
  ],
  'PUT /me/password': () => [{ method: 'PUT', path: '/me/password', body: { password_actual: 'no-es-la-contraseña', password_nueva: 'otra-contraseña-segura-1' }, status: 401 }],
  'POST /auth/logout': () => [{ method: 'POST', path: '/auth/logout', status: 200 }],
  // /ready has a per-IP window of its own (RATE_LIMIT_DOCS_MAX=3 here): the fourth is a 429.
  'GET /ready': () => [200, 200, 200, 429].map((status) => ({ method: 'GET', path: '/ready', status })),
}

/**
 * Error statuses driven apart from the routes (each once): a value the
 * document's pattern lets through but the service refuses (a local time
 * in the spring gap, named in the description), a permission the caller lacks, a duplicate, an
 * Idempotency-Key reused, a body over 1 MiB, a URL past 16 KiB, a
 * content type the service does not read. 500 and 503 are
 * declared on every route but not driven: the service has no way to fail
 * on request, and 503 needs PostgreSQL or Redis gone (test/faults/ does that).
 */
const ERROR_STEPS: Array<(t: Tour) => Request> = [
  () => ({ method: 'GET', path: '/denuncias', query: { 'fecha_hechos[gte]': '2026-03-29 02:30:00' }, status: 400 }),
  (t) => ({ method: 'POST', path: '/denuncias', body: { ...sampleBody(registry.byName.get('denuncias')!, t.ids), fecha_hechos: '2026-03-29 02:30:00' }, status: 400 }),
  () => ({ method: 'DELETE', path: '/denuncias/DEN-2026-00001', token: 'limited', status: 403 }),
  (t) => ({ method: 'POST', path: '/usuarios', body: { ...sampleBody(registry.usersModule, t.ids), username: t.users.username }, status: 409 }),
  // Prism sends the body on as it re-serialises it: over 1 MiB in UTF-8 within every maxLength and maxItems (3 bytes a character).
  (t) => ({ method: 'POST', path: '/denuncias', body: { ...sampleBody(registry.byName.get('denuncias')!, t.ids), testigos: Array.from({ length: 50 }, () => ({ nombre: 'Testigo', declaracion: '€'.repeat(8000) })) }, status: 413 }),
  // An Idempotency-Key answered for another body (the keyed create of 'POST /{module}').
  (t) => ({ method: 'POST', path: '/denuncias', body: sampleBody(registry.byName.get('denuncias')!, t.ids), headers: { 'Idempotency-Key': 'tour-denuncias' }, status: 422 }),
  // A list with a long filter, each value within the document's limits: past 16 KiB of request line, the service's 431.
  () => ({ method: 'GET', path: '/denuncias', query: { lugar_hechos: Array.from({ length: 100 }, (_, i) => `Calle Mayor ${i} `.padEnd(200, 'x')) }, status: 431 }),
  // Only JSON: the document says so too, so Prism refuses another type before the service can.
  () => ({ method: 'POST', path: '/denuncias', raw: { text: 'denunciante_nombre=Ana', type: 'text/plain' }, status: 415, refusedByDocument: true }),
]

let h: Harness
let app: FastifyInstance
let prism: Proxy
let dir: string
let doc: Schema
const tokens: Record<string, string> = {}

beforeAll(async () => {
  h = await createHarness()
  app = await h.app({ env: { RATE_LIMIT_DOCS_MAX: '3' } })
  const upstream = await listenApp(app)
  doc = (await call(app, 'GET', '/docs/json')).body
  dir = mkdtempSync(join(tmpdir(), 'policia-contract-'))
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc))
  prism = await startPrism(join(dir, 'openapi.json'), upstream)
  tokens.admin = await login(app)
  tokens.limited = (await newUser(app, tokens.admin!, 'agente')).token
  tokens.dpo = (await newUser(app, tokens.admin!, 'delegado_proteccion_datos')).token
}, 400_000)

afterAll(async () => {
  await prism?.stop()
  await h?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** Sends one request through Prism; the problems found, none when the answer is the expected one and undescribed by no violation. */
async function send (r: Request): Promise<string[]> {
  const url = new URL(r.path, prism.base)
  for (const [k, v] of Object.entries(r.query ?? {})) for (const one of [v].flat()) url.searchParams.append(k, one)
  const headers: Record<string, string> = { ...r.headers }
  const token = r.token === 'invalid' ? 'no-es-un-token' : r.token === 'limited' || r.token === 'dpo' ? tokens[r.token] : tokens.admin
  if (r.token !== 'none') headers.authorization = `Bearer ${token}`
  let body: string | undefined
  if (r.raw !== undefined) { body = r.raw.text; headers['content-type'] = r.raw.type } else if (r.body !== undefined) { body = JSON.stringify(r.body); headers['content-type'] = 'application/json' }
  const what = `${r.method} ${url.pathname}${url.search.slice(0, 200)}`
  let res: Response
  let text: string
  const attempt = async (): Promise<Response> => fetch(url, { method: r.method, headers, ...(body !== undefined && { body }) })
  try {
    // Once more when a kept-alive connection was closed under the request (Node's 5 s idle timeout in Prism).
    res = await attempt().catch(async () => attempt())
    text = await res.text()
  } catch (err) {
    return [`${what}: no answer through Prism (${String((err as Error).cause ?? err)}); Prism's log ends: ${prism.log().slice(-1500)}`]
  }
  const problems: string[] = []
  if (r.refusedByDocument === true) {
    const codes = res.status === 422 ? (JSON.parse(text).validation as Array<{ code: unknown }>).map((v) => v.code) : []
    if (!codes.includes(r.status)) problems.push(`${what}: ${res.status}, expected Prism's 422 naming ${r.status}: ${text.slice(0, 400)}`)
    return problems
  }
  if (res.status !== r.status) problems.push(`${what}: ${res.status}, expected ${r.status}: ${text.slice(0, 400)}`)
  const violations = res.headers.get('sl-violations')
  if (violations !== null) problems.push(`${what}: ${violations.slice(0, 1000)}`)
  const json = /^application\/json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) as Schema : undefined
  // The 431 is the service's envelope, not Prism's own Node refusing a long URL.
  if (res.status === 431 && json?.codigo !== 'CABECERAS_DEMASIADO_GRANDES') problems.push(`${what}: 431 not the service's: ${text.slice(0, 200)}`)
  // An upload answers the record as written beside the file.
  const written = json?.data?.registro ?? json?.data
  if (res.status < 300 && written?._version !== undefined) lastVersion = written._version as number
  if (r.method === 'POST' && res.status === 201 && json?.data.archivo !== undefined) lastFile = json.data.archivo.id as string
  else if (r.method === 'POST' && res.status === 201) lastId = json?.data._id as string
  return problems
}
let lastVersion: number | undefined
let lastId: string | undefined
let lastFile: string | undefined

/** The step of an operation: its own line, or the line every module's operation of that shape has. */
function stepOf (key: string): { step: Step, mod?: ModuleDef } | undefined {
  if (STEPS[key] !== undefined) return { step: STEPS[key] }
  const [method, path] = key.split(' ') as [string, string]
  const mod = registry.modules.find((m) => path === `/${m.path}` || path.startsWith(`/${m.path}/`))
  if (mod === undefined) return undefined
  const generic = `${method} ${path.replace(`/${mod.path}`, '/{module}')}`
  return STEPS[generic] === undefined ? undefined : { step: STEPS[generic], mod }
}

const operations = (): string[] => Object.entries(doc.paths as Record<string, Schema>).flatMap(([path, item]) =>
  Object.keys(item).filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m)).map((m) => `${m.toUpperCase()} ${path}`))

it('has a step for every operation of the document', () => {
  const without = operations().filter((key) => stepOf(key) === undefined)
  expect(without, 'operations of the document with no step in test/contract/tour.test.ts STEPS').toEqual([])
})

it('drives every route, filter and error status through Prism without a violation', async () => {
  const problems: string[] = []
  const seen = new Set<number>()
  const t: Tour = { ids: new Map(), versions: new Map(), doc, users: await newUser(app, tokens.admin!, 'agente'), files: new Map() }
  const run = async (requests: Request[], mod?: ModuleDef): Promise<void> => {
    for (const r of requests) {
      lastVersion = undefined
      lastId = undefined
      lastFile = undefined
      problems.push(...await send(r))
      seen.add(r.status)
      if (mod !== undefined && lastId !== undefined) t.ids.set(mod.name, lastId)
      if (mod !== undefined && lastFile !== undefined) t.files.set(mod.name, { campo: fileField(mod), id: lastFile })
      if (mod !== undefined && lastVersion !== undefined) t.versions.set(mod.name, lastVersion)
    }
  }
  const keys = operations()
  // Each module's operations in STEPS order, the modules in an order where a ref's target exists first.
  for (const mod of refOrder(registry)) {
    for (const generic of Object.keys(STEPS).filter((k) => k.includes('{module}'))) {
      const key = generic.replace('{module}', mod.path)
      if (keys.includes(key)) await run(STEPS[generic]!(t, mod), mod)
    }
  }
  for (const e of ERROR_STEPS) await run([e(t)])
  for (const [key, step] of Object.entries(STEPS).filter(([k]) => !k.includes('{module}'))) {
    if (keys.includes(key)) await run(step(t, registry.modules[0]!))
  }
  expect(problems, prism.log().slice(-3000)).toEqual([])
  const declared = new Set(Object.keys(doc.components.responses).map((n) => Number(n.replace('Error', ''))))
  const undriven = [...declared].filter((s) => !seen.has(s))
  // 408 takes a client that stops sending for 60 s (test/integration/client-errors.test.ts answers it), 503 a store down (test/faults/).
  expect(undriven.sort(), 'declared error statuses the tour does not drive').toEqual([408, 500, 503])
}, 600_000)
