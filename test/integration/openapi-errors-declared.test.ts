/**
 * Errors as they happen, in the document (docs/user-guide.md "The
 * document is the contract"): each answer the service gives is checked
 * against the response GET /docs/json declares for it on that route. A
 * 415 of an upload carries `detalles`; a request past Node's 16 KiB (a
 * list sent every parameter it declares) is 431 in the envelope, declared
 * on every route; file routes name their `campo` as an enum and declare
 * the 400 of another name; an upload lists concrete media types,
 * `application/octet-stream` first, and the service takes what a client
 * generated from them sends.
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { ok, type Api, type Res } from '../helpers/http.js'
import { errorOf, expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { listenApp } from '../helpers/free-port.js'

type Schema = Record<string, any>
const registry = loadRegistry('modules.yaml')
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)])

let h: Harness
let app: FastifyInstance
let token: string
let admin: Api
let base: string
let doc: Schema
let recordId: string

beforeAll(async () => {
  ({ h, app, token, admin } = await startTestApp())
  base = await listenApp(app)
  doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  recordId = ok(await admin.post('/denuncias', { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle Mayor', descripcion: 'Robo' }), 201)._id
})
afterAll(async () => { await h?.close() })

const ajv = new Ajv2020({ strict: false, allErrors: true })
/** Whether `body` is what operation `method path` declares for `status` (its shared error response, resolved in the document). */
function declared (method: string, path: string, status: number, body: unknown): string[] {
  const op = doc.paths[path]?.[method]
  if (op?.responses?.[String(status)] === undefined) return [`${method.toUpperCase()} ${path} declares no ${status}`]
  const ref = op.responses[String(status)].$ref as string
  const schema = doc.components.responses[ref.split('/').pop()!].content['application/json'].schema
  const check = ajv.compile({ ...schema, components: doc.components })
  return check(body) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
}

async function upload (type: string | undefined, body: Buffer, campo = 'adjuntos'): Promise<Res> {
  const res = await app.inject({ method: 'POST', url: `/denuncias/${recordId}/archivos/${campo}?nombre=prueba`, headers: { authorization: `Bearer ${token}`, ...(type !== undefined && { 'content-type': type }) }, payload: body })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

/** A GET over a socket (a request line past 16 KiB is Node's parser's business, which app.inject skips). */
async function rawGet (path: string): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => { text += d.toString() })
      res.on('end', () => { resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers as Res['headers'] }) })
    })
    req.on('error', reject)
    req.end()
  })
}

const UPLOAD = '/denuncias/{id}/archivos/{campo}'
const DOWNLOAD = '/denuncias/{id}/archivos/{campo}/{archivo}'

describe('errors as they happen, as the document declares them', () => {
  it('415: an upload whose bytes contradict its type names both in detalles, and the 415 the document declares takes them', async () => {
    const res = await upload('application/pdf', PNG)
    expectError(res, 'TIPO_CONTENIDO_NO_SOPORTADO')
    expect(res.body.detalles).toEqual([{ campo: 'Content-Type', mensaje: expect.stringContaining('application/pdf') }])
    expect(declared('post', UPLOAD, 415, res.body)).toEqual([])
  })

  it('431: a list sent every parameter it declares and a long list of values passes 16 KiB and is answered in the envelope, declared on every route', async () => {
    const params = (doc.paths['/denuncias'].get.parameters as Schema[]).filter((p) => p.in === 'query')
    const value = (p: Schema): string => String(p.example ?? p.schema?.example ?? p.schema?.examples?.[0] ?? p.content?.['application/json']?.example ?? 'ejemplo')
    const every = params.map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(typeof p.content === 'object' ? JSON.stringify(value(p)) : value(p))}`)
    // An equality filter is a list (style form, explode): a long one takes the rest.
    const query = [...every, ...Array.from({ length: 1000 }, () => 'estado=pendiente')].join('&')
    expect(query.length).toBeGreaterThan(16 * 1024)
    const res = await rawGet(`/denuncias?${query}`)
    expect(res.body).toEqual(errorOf('CABECERAS_DEMASIADO_GRANDES'))
    expect(res.status).toBe(431)
    expect(String(res.headers['x-request-id'])).toMatch(/^[\w.-]{1,64}$/)
    expect(declared('get', '/denuncias', 431, res.body)).toEqual([])
    const without = Object.entries(doc.paths as Record<string, Schema>).flatMap(([path, item]) =>
      Object.entries(item).filter(([, op]) => op.responses !== undefined && op.responses['431'] === undefined).map(([m]) => `${m} ${path}`))
    expect(without).toEqual([])
  })

  it('file routes: campo is one of the module\'s file fields, and another name is a 400 each route declares', async () => {
    for (const mod of registry.modules) {
      const fields = mod.fields.filter((f) => f.type === 'file').map((f) => f.name)
      const routes = Object.entries(doc.paths as Record<string, Schema>).filter(([path]) => path.startsWith(`/${mod.path}/{id}/archivos/{campo}`))
      expect(routes.length > 0, mod.name).toBe(fields.length > 0)
      for (const [path, item] of routes) {
        for (const [method, op] of Object.entries(item as Record<string, Schema>)) {
          const campo = (op.parameters as Schema[]).find((p) => p.in === 'path' && p.name === 'campo')!
          expect(campo.schema.enum, `${method} ${path}`).toEqual(fields)
          expect((op.parameters as Schema[]).find((p) => p.in === 'path' && p.name === 'id')!.schema.pattern, `${method} ${path}`).toBe(`^${mod.prefix}-\\d{4}-\\d{5,}$`)
          expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '401', '403', '404', '431', '500', '503']))
        }
      }
    }
    const stored = ok(await upload('image/png', PNG), 201).archivo.id as string
    for (const [path, url] of [[DOWNLOAD, `/denuncias/${recordId}/archivos/nada/${stored}`], [`${DOWNLOAD}/custodia`, `/denuncias/${recordId}/archivos/nada/${stored}/custodia`]] as const) {
      const res = await admin.get(url)
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles).toEqual([{ campo: 'campo', mensaje: 'no es un campo de archivos de este módulo' }])
      expect(declared('get', path, 400, res.body), path).toEqual([])
    }
    const res = await upload('image/png', PNG, 'nada')
    expect(declared('post', UPLOAD, 400, res.body)).toEqual([])
    expect(declared('get', DOWNLOAD, 416, errorOf('RANGO_NO_SATISFACIBLE'))).toEqual([])
  })

  it('an upload lists concrete media types, application/octet-stream first; what a generated client sends is taken', async () => {
    const types = Object.keys(doc.paths[UPLOAD].post.requestBody.content)
    expect(types[0]).toBe('application/octet-stream')
    expect(types).toEqual(expect.arrayContaining(['image/png', 'image/jpeg', 'application/pdf', 'video/mp4', 'text/plain']))
    expect(types.every((t) => /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(t)), types.join(' ')).toBe(true)
    // application/octet-stream stands for any type: the bytes tell it.
    expect(ok(await upload('application/octet-stream', PNG), 201).archivo.tipo).toBe('image/png')
    expect(ok(await upload('text/plain', Buffer.from('Nota de la inspección ocular')), 201).archivo.tipo).toBe('text/plain')
    // As before: no Content-Type is application/octet-stream, and a type the list does not name is taken too.
    expect(ok(await upload(undefined, PNG), 201).archivo.tipo).toBe('image/png')
    expect(ok(await upload('audio/flac', Buffer.from('fLaC0000')), 201).archivo.tipo).toBe('audio/flac')
    // What `*/*` in the document made clients send: no media type.
    const star = await upload('*/*', PNG)
    expectError(star, 'DATOS_INVALIDOS')
    expect(declared('post', UPLOAD, 400, star.body)).toEqual([])
  })
})
