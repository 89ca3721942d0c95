/**
 * The API explorer and the OpenAPI document are complete enough for a
 * generated client (docs/user-guide.md "API explorer and OpenAPI document"): servers, one unique operationId per route,
 * every list query parameter with its operators (from the field types),
 * every error response in the error envelope, bodies that reject unknown keys
 * (and a service that does), required fields not nullable, system fields
 * required in records. GET /docs is the explorer for a browser and the
 * document for anything else; nothing under /docs needs a token or counts
 * against the normal limits, and no asset comes from another host. (The typed-client check,
 * the linter and the browser test run apart: docs/user-guide.md "API explorer and
 * OpenAPI document".)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import { ERRORS } from '../../core/errors.js'
import { SYSTEM_FIELDS } from '../../core/system-fields.js'
import { typeOf } from '../../core/field-types/index.js'
import { LIST_PARAMETERS, listFilters } from '../../records/list-query.js'
import { ANY_OF_PARAMETER, MAX_GROUPS } from '../../records/any-of-query.js'
import { readShapeParameters } from '../../generate/list-parameters.js'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'

const registry = loadRegistry('modules.yaml')
type Schema = Record<string, any>

let h: Harness
let app: FastifyInstance
let doc: Schema

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  doc = (await call(app, 'GET', '/docs/json')).body
})
afterAll(async () => { await h.close() })

function operations (): Array<{ method: string, path: string, op: Schema }> {
  return Object.entries(doc.paths as Record<string, Schema>).flatMap(([path, item]) =>
    Object.entries(item).filter(([m]) => ['get', 'post', 'put', 'delete', 'patch'].includes(m)).map(([method, op]) => ({ method, path, op })))
}

const bodyOf = (op: Schema): Schema => op.requestBody.content['application/json'].schema
const queryOf = (op: Schema): Map<string, Schema> => new Map((op.parameters ?? []).filter((p: Schema) => p.in === 'query').map((p: Schema) => [p.name, p]))
const responseRef = (op: Schema, status: number): string | undefined => op.responses[String(status)]?.$ref

describe('GET /docs and /docs/json', () => {
  it('/docs is the explorer for a browser and the document for anything else; neither needs a token', async () => {
    const html = await call(app, 'GET', '/docs', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } })
    expect(html.status).toBe(200)
    expect(String(html.headers['content-type'])).toMatch(/^text\/html/)
    expect(html.body).toContain('swagger-ui')
    // Every script and style is the service's own: no CDN.
    expect(html.body).not.toMatch(/(?:src|href)=["']https?:/)
    expect(String(html.headers['content-security-policy'])).toContain("script-src 'self'")
    const json = await call(app, 'GET', '/docs')
    expect(String(json.headers['content-type'])).toMatch(/^application\/json/)
    expect(json.body).toEqual(doc)
    expect(doc.openapi).toMatch(/^3\.1\./)
    const asset = await call(app, 'GET', '/docs/static/swagger-ui-bundle.js')
    expect(asset.status).toBe(200)
    expect(String(asset.headers['content-type'])).toMatch(/javascript/)
    expectError(await call(app, 'GET', '/docs/static/no-such-file.js'), 'RUTA_NO_ENCONTRADA')
  })

  it('is not held to the normal limits, only to a per-IP window of its own (an instance that allows 3 requests per address per hour)', async () => {
    const limited = await h.app({ env: { RATE_LIMIT_IP_MAX: '3', RATE_LIMIT_IP_WINDOW: '1h', RATE_LIMIT_DOCS_MAX: '60' } })
    for (let i = 0; i < 6; i++) {
      for (const url of ['/docs', '/docs/json', '/docs/static/swagger-initializer.js']) {
        const res = await call(limited, 'GET', url, { headers: { accept: 'text/html' } })
        expect(res.status, url).toBe(200)
        // The /docs window, not the 3 of the normal limit.
        expect(res.headers['ratelimit-limit'], url).toBe('60')
      }
    }
    // while a counted route is limited
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await call(limited, 'GET', '/me')).status)
    expect(statuses).toContain(429)
  })
})

describe('the document', () => {
  it('names servers, and an operationId for every route, unique and readable', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: expect.any(String) })])
    const ids = operations().map(({ op }) => op.operationId as string)
    expect(ids.every((id) => /^[a-z][A-Za-z0-9]*$/.test(id)), ids.join(' ')).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    for (const m of registry.modules) {
      const noun = m.name.split('_').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
      expect(doc.paths[`/${m.path}`].get.operationId).toBe(`list${noun}`)
      expect(doc.paths[`/${m.path}`].post.operationId).toBe(`create${noun}`)
      expect(doc.paths[`/${m.path}/{id}`].put.operationId).toBe(`update${noun}`)
    }
    expect(doc.paths['/auth/login'].post.operationId).toBe('login')
  })

  it("documents every list parameter, and each filter with exactly its type's operators", () => {
    for (const m of registry.modules) {
      const query = queryOf(doc.paths[`/${m.path}`].get)
      for (const p of LIST_PARAMETERS) expect(query.has(p), `${m.name} ${p}`).toBe(true)
      expect(query.get('limit')!.schema.type).toBe('integer')
      const groups = Array.from({ length: MAX_GROUPS }, (_, i) => `${ANY_OF_PARAMETER}[${i + 1}]`) // the any-of groups: test/integration/any-of.test.ts
      const expected = new Set([...LIST_PARAMETERS, ...groups, ...Object.keys(readShapeParameters(m))])
      for (const f of listFilters(m)) {
        for (const op of f.operators) expected.add(op === 'eq' ? f.name : `${f.name}[${op}]`)
        const field = m.fieldMap.get(f.name)
        if (field !== undefined && !field.encrypted) expect(f.operators, f.name).toEqual(field.filterable ? typeOf(field).operators : typeOf(field).searchOperators)
      }
      expect(new Set(query.keys()), m.name).toEqual(expected)
    }
    const denuncias = queryOf(doc.paths['/denuncias'].get)
    // A repeated equality filter is an array of the enum's values.
    expect(denuncias.get('estado')!.schema.items.enum).toEqual(['pendiente', 'investigacion', 'archivada', 'judicializada'])
    expect(denuncias.get('estado')!).toMatchObject({ style: 'form', explode: true })
    expect(denuncias.has('fecha_hechos[gte]')).toBe(true)
    expect(denuncias.has('lugar_hechos[contiene]')).toBe(true)
    expect(denuncias.has('denunciante_dni')).toBe(true) // searchable encrypted: blind index, exact
    expect(denuncias.has('denunciante_dni[contiene]')).toBe(false)
    expect(denuncias.has('descripcion')).toBe(false) // text: not filterable, only searched
    expect(denuncias.has('descripcion[contiene]')).toBe(true)
    expect(denuncias.has('testigos[vacio]')).toBe(true) // an array: only whether it holds anything
    expect(denuncias.has('testigos')).toBe(false)
    expect(denuncias.has('_hash')).toBe(false)
  })

  const answer = (op: Schema): Schema => op.responses['200'].content['application/json'].schema.properties.data

  it('documents campos and expandir on a list and a GET by id: a plain read\'s ref is an id, an expanded read\'s may hold the related record, a partial read has only _id for sure', () => {
    for (const path of ['/turnos', '/turnos/{id}']) {
      const query = queryOf(doc.paths[path].get)
      expect(query.get('campos')?.example, path).toBe('agente_id,fecha,_version')
      expect(query.get('expandir')?.example, path).toBe('agente_id,vehiculo_asignado,compañero')
    }
    // A module without references has no expandir.
    expect(queryOf(doc.paths['/atestados'].get).has('expandir')).toBe(false)
    // An export takes campos (no referencia.campo) and never expandir.
    const exported = queryOf(doc.paths['/turnos/exportar'].get)
    expect(exported.get('campos')?.description).toMatch(/Sin referencia.campo ni expandir/)
    expect(exported.has('expandir')).toBe(false)
    const turno = doc.components.schemas.turnosRecord
    expect(turno.properties.vehiculo_asignado).toMatchObject({ type: ['string', 'null'], pattern: '^VEH-\\d{4}-\\d{5,}$' })
    expect(turno.properties.vehiculo_asignado.anyOf).toBeUndefined()
    expect(turno.properties._sin_expandir).toBeUndefined()
    const expanded = doc.components.schemas.turnosExpandido
    expect(expanded.properties.vehiculo_asignado.anyOf).toEqual([{ type: ['string', 'null'], pattern: '^VEH-\\d{4}-\\d{5,}$' }, expect.objectContaining({ type: 'object', required: ['_id'] })])
    expect(expanded.properties._sin_expandir).toMatchObject({ type: 'array', items: { type: 'string' } })
    expect(expanded.required).toEqual(turno.required)
    expect(expanded.required).not.toContain('_sin_expandir')
    // With campos only _id and the named fields: the list and the GET answer the whole record, the expanded one or a partial one.
    const partial = doc.components.schemas.turnosParcial
    expect(partial.required).toEqual(['_id'])
    expect(partial.properties).toEqual(expanded.properties)
    const either = ['turnosRecord', 'turnosExpandido', 'turnosParcial'].map((n) => ({ $ref: `#/components/schemas/${n}` }))
    // A module without references has no expanded read.
    expect(doc.components.schemas.atestadosExpandido).toBeUndefined()
    expect(answer(doc.paths['/atestados/{id}'].get).anyOf).toEqual([{ $ref: '#/components/schemas/atestadosRecord' }, { $ref: '#/components/schemas/atestadosParcial' }])
    expect(answer(doc.paths['/turnos'].get).properties.records.items.anyOf).toEqual(either)
    expect(answer(doc.paths['/turnos/{id}'].get).anyOf).toEqual(either)
    expect(answer(doc.paths['/turnos/{id}'].put)).toEqual({ $ref: '#/components/schemas/turnosRecord' })
  })

  it('gives every route its error responses, in the envelope, from one shared response per status', () => {
    const shared = doc.components.schemas.Error
    expect(shared.properties.success).toEqual({ type: 'boolean', enum: [false] })
    expect(shared.required).toEqual(['success', 'error', 'codigo'])
    expect(shared.properties.detalles.type).toBe('array')
    for (const [name, response] of Object.entries(doc.components.responses as Record<string, Schema>)) {
      const status = Number(name.replace('Error', ''))
      const schema = response.content['application/json'].schema
      expect(schema.allOf).toEqual([{ $ref: '#/components/schemas/Error' }])
      expect(schema.properties.error.enum).toEqual(Object.values(ERRORS).filter((e) => e.status === status).map((e) => e.message))
      expect(schema.properties.codigo.enum).toEqual(Object.entries(ERRORS).filter(([, e]) => e.status === status).map(([code]) => code))
      // detalles: validation (400), a duplicate or a transition (409), an import's row limit (413), an upload's type its
      // bytes contradict (415), a user's streams at their limit (429), a store named down (503); no other status sends it.
      expect(schema.properties.detalles, name).toBe([400, 409, 413, 415, 429, 503].includes(status) ? undefined : false)
      expect(response.headers['X-Request-Id'].required, name).toBe(true)
      // 429 always; 409 when the first request with the same Idempotency-Key still runs; 503 when the file store is down.
      expect(response.headers['Retry-After'] !== undefined, name).toBe(status === 429 || status === 409 || status === 503)
      if (status === 409) expect(response.headers['Retry-After'].required, name).toBe(false)
    }
    for (const { method, path, op } of operations()) {
      const errors = Object.keys(op.responses).filter((s) => Number(s) >= 400)
      for (const s of errors) expect(responseRef(op, Number(s)), `${method} ${path} ${s}`).toBe(`#/components/responses/Error${s}`)
      if (path !== '/health' && path !== '/ready') expect(errors.some((s) => s.startsWith('4')), `${method} ${path}`).toBe(true)
      if (op.requestBody !== undefined) expect(errors, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '413', '415']))
      if (op.security === undefined) expect(errors, `${method} ${path}`).toEqual(expect.arrayContaining(['401']))
    }
    const create = doc.paths['/denuncias'].post
    expect(Object.keys(create.responses)).toEqual(['201', '400', '401', '403', '408', '409', '413', '415', '422', '429', '431', '500', '503'])
    // Creates and imports take an Idempotency-Key (docs/user-guide.md "Retries and Idempotency-Key").
    for (const op of [create, doc.paths['/denuncias/importar'].post, doc.paths['/suscripciones'].post]) {
      expect(op.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'Idempotency-Key', required: false }))
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '422']))
      expect(op.responses['201'].headers['Idempotent-Replayed'].required).toBe(false)
    }
    expect(doc.paths['/denuncias/{id}'].put.parameters).not.toContainEqual(expect.objectContaining({ name: 'Idempotency-Key' }))
    const get = doc.paths['/denuncias/{id}'].get
    // campos and expandir: a GET by id can be a 400 too.
    expect(Object.keys(get.responses)).toEqual(['200', '400', '401', '403', '404', '408', '429', '431', '500', '503'])
    for (const op of [get, create, doc.paths['/denuncias/{id}'].put, doc.paths['/denuncias/{id}/restaurar'].post]) {
      const success = Object.values(op.responses as Record<string, Schema>)[0]!
      // A GET by id with campos that leaves out _version has no version to send.
      expect(success.headers.ETag.required).toBe(op !== get)
      if (op === get) expect(success.headers.ETag.description).toContain('campos')
      expect(success.headers['RateLimit-Remaining']).toBeDefined()
    }
    for (const op of [doc.paths['/denuncias/{id}'].put, doc.paths['/denuncias/{id}'].delete]) {
      expect(op.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'If-Match' }))
      expect(Object.keys(op.responses)).toContain('400')
    }
    expect(doc.paths['/denuncias/{id}'].get.parameters).toContainEqual(expect.objectContaining({ in: 'path', name: 'id', schema: expect.objectContaining({ pattern: '^DEN-\\d{4}-\\d{5,}$' }) }))
    expect(doc.paths['/health'].get.responses['200'].headers['RateLimit-Limit']).toBeUndefined()
    expect(doc.paths['/health'].get.responses['200'].headers['X-Request-Id']).toBeDefined()
    const loginOp = doc.paths['/auth/login'].post
    expect(loginOp.security).toEqual([])
    expect(Object.keys(loginOp.responses)).toEqual(['200', '400', '401', '408', '413', '415', '429', '431', '500', '503'])
    expect(doc.paths['/ready'].get.responses['503']).toBeDefined()
  })

  it('documents bodies that reject unknown keys, with required fields not nullable', () => {
    for (const m of registry.modules) {
      const create = bodyOf(doc.paths[`/${m.path}`].post)
      const update = bodyOf(doc.paths[`/${m.path}/{id}`].put)
      for (const body of [create, update]) {
        expect(body.additionalProperties, m.name).toBe(false)
        expect(body.patternProperties, m.name).toBeUndefined()
      }
      expect(create.required).toEqual(m.fields.filter((f) => f.required && f.default === undefined).map((f) => f.name))
      expect(update.required ?? []).toEqual([])
      expect(update.properties._version.type).toBe('integer')
      for (const f of m.fields) {
        const nullable = (s: Schema): boolean => [s.type].flat().includes('null')
        expect(nullable(create.properties[f.name]), `${m.name}.${f.name}`).toBe(!f.required)
        expect(nullable(update.properties[f.name]), `${m.name}.${f.name}`).toBe(!f.required)
      }
    }
  })

  it('and the service refuses unknown keys as documented', async () => {
    const token = await login(app)
    const res = await call(app, 'POST', '/sala092', { token, body: { tipo_incidencia: 'urgente', descripcion: 'x', descripción: 'x' } })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([expect.objectContaining({ campo: 'descripción' })])
  })

  it('a read answers what its shape says: a plain read validates as the Record (files as ArchivoAdjunto, refs as ids), an expanded one as Expandido, a partial one as Parcial', async () => {
    const ajv = new Ajv2020({ strict: false })
    const components = doc.components.schemas
    ajv.addSchema({ $id: 'doc', components: { schemas: components } })
    const shape = (name: string) => ajv.getSchema(`doc#/components/schemas/${name}`)!
    expect(components.ArchivoAdjunto).toMatchObject({ type: 'object', additionalProperties: false, required: ['id', 'nombre', 'tipo', 'bytes', 'sha256', 'subido', 'subido_por'] })
    expect(components.denunciasRecord.properties.adjuntos.items.anyOf[0]).toEqual({ $ref: '#/components/schemas/ArchivoAdjunto' })
    const token = await login(app)
    const made = await call(app, 'POST', '/denuncias', { token, body: { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle Mayor', descripcion: 'Robo de bicicleta' } })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    const id = made.body.data._id as string
    const up = await app.inject({ method: 'POST', url: `/denuncias/${id}/archivos/adjuntos?nombre=foto.png`, headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' }, payload: Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex') })
    expect(up.statusCode, up.body).toBe(201)
    const plain = (await call(app, 'GET', `/denuncias/${id}`, { token })).body.data
    expect(plain.adjuntos).toHaveLength(1)
    expect(shape('denunciasRecord')(plain), JSON.stringify(shape('denunciasRecord').errors)).toBe(true)
    const expanded = (await call(app, 'GET', `/denuncias/${id}?expandir=agente_asignado`, { token })).body.data
    expect(shape('denunciasExpandido')(expanded), JSON.stringify(shape('denunciasExpandido').errors)).toBe(true)
    const partial = (await call(app, 'GET', `/denuncias/${id}?campos=tipo`, { token })).body.data
    expect(shape('denunciasParcial')(partial)).toBe(true)
    expect(shape('denunciasRecord')(partial)).toBe(false)
  })

  it('an update names at least one field besides _version, in the document and in the service', async () => {
    const ajv = new Ajv2020({ strict: false })
    for (const m of registry.modules) {
      const body = doc.paths[`/${m.path}/{id}`].put.requestBody.content['application/json']
      const check = ajv.compile(body.schema)
      expect(check({ _version: 1 }), m.name).toBe(false)
      expect(check({}), m.name).toBe(false)
      expect(check(body.example), `${m.name}: ${JSON.stringify(check.errors)}`).toBe(true)
    }
    const token = await login(app)
    const made = await call(app, 'POST', '/sala092', { token, body: { tipo_incidencia: 'urgente', descripcion: 'Aviso de prueba' } })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    expectError(await call(app, 'PUT', `/sala092/${made.body.data._id as string}`, { token, body: { _version: 1 } }), 'DATOS_REQUERIDOS')
  })

  it('requires _id, the system fields and every field a record always carries; withheld encrypted fields stay optional', () => {
    for (const m of registry.modules) {
      const record = doc.components.schemas[`${m.name}Record`]
      const shown = m.fields.filter((f) => !typeOf(f).writeOnly)
      expect(new Set(record.required), m.name).toEqual(new Set([...SYSTEM_FIELDS.map((s) => s.name), ...shown.filter((f) => !f.encrypted).map((f) => f.name)]))
      expect(record.properties._id.type).toBe('string')
      expect(record.properties._deleted.type).toEqual(['string', 'null'])
    }
  })

  it('describes a subscription as the service takes it (modules, event types and roles as enums, an http(s) address, the secret\'s pattern), and the service takes the example', async () => {
    const content = doc.paths['/suscripciones'].post.requestBody.content['application/json']
    const create = content.schema
    const modules = registry.modules.map((m) => m.name)
    expect(create.properties.modulos).toMatchObject({ type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: modules } })
    expect(create.properties.tipos.type).toContain('array')
    expect(create.properties.tipos.items.enum).toEqual(expect.arrayContaining(['denuncias.creado', 'sala092.actualizado', 'turnos.eliminado', 'personal.restaurado']))
    expect(create.properties.tipos.items.enum).not.toContain('denuncias.modificado')
    expect(create.properties.rol).toMatchObject({ type: 'string', enum: registry.roles.map((r) => r.name) })
    expect(create.properties.url).toMatchObject({ type: 'string', format: 'uri', pattern: '^https?://' })
    const secret = new RegExp(create.properties.secreto.pattern)
    expect(secret.test(`whsec_${Buffer.alloc(32, 1).toString('base64')}`)).toBe(true)
    expect(secret.test(`whsec_${Buffer.alloc(16, 1).toString('base64')}`)).toBe(false)
    // The record shows the same enums.
    expect(doc.components.schemas.suscripcionesRecord.properties.modulos.items.enum).toEqual(modules)
    const token = await login(app)
    const res = await call(app, 'POST', '/suscripciones', { token, body: content.example })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const update = doc.paths['/suscripciones/{id}'].put.requestBody.content['application/json'].example
    const changed = await call(app, 'PUT', `/suscripciones/${res.body.data._id as string}`, { token, body: update })
    expect(changed.status, JSON.stringify(changed.body)).toBe(200)
  })
})
