/**
 * A method that a known path does not have is 405 `Método no permitido en
 * esta ruta` in the envelope, with `Allow` naming the methods the path has
 * (HEAD with GET, OPTIONS where CORS answers a preflight); an unknown path
 * stays 404; the token is checked first, as for a 404, and no body is read
 * (docs/user-guide.md "Errors"). Over a listening server: TRACE, QUERY and
 * PROPFIND as a client sends them.
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { login } from '../helpers/http.js'
import { listenApp } from '../helpers/free-port.js'

const ALLOWED = 'https://intranet.policia.example'
let h: Harness
let token: string
let base: string
let corsBase: string
let corsToken: string
let app: FastifyInstance

beforeAll(async () => {
  ({ h, app, token } = await startTestApp())
  base = await listenApp(app)
  const cors = await h.app({ env: { CORS_ORIGINS: ALLOWED } })
  corsBase = await listenApp(cors)
  corsToken = await login(cors)
})
afterAll(async () => { await h?.close() })

interface Answer { status: number, allow: string | undefined, body: any, headers: Record<string, unknown> }

/** Any method, as a client sends it. */
async function send (method: string, path: string, opts: { to?: string, token?: string | null, headers?: Record<string, string>, body?: string } = {}): Promise<Answer> {
  const bearer = opts.token === undefined ? token : opts.token
  return new Promise((resolve, reject) => {
    const req = request(`${opts.to ?? base}${path}`, { method, headers: { ...(bearer !== null && { authorization: `Bearer ${bearer}` }), ...opts.headers } }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => { text += d.toString() })
      res.on('end', () => {
        let body: unknown = text
        try { body = JSON.parse(text) } catch { /* shown as text */ }
        resolve({ status: res.statusCode!, allow: res.headers.allow, body, headers: res.headers })
      })
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

describe('405 for a method the path does not have', () => {
  it.each([
    ['TRACE', '/denuncias', 'GET, HEAD, POST'],
    ['QUERY', '/denuncias', 'GET, HEAD, POST'],
    ['PATCH', '/denuncias/DEN-2026-00001', 'GET, HEAD, PUT, DELETE'],
    ['PROPFIND', '/denuncias/DEN-2026-00001', 'GET, HEAD, PUT, DELETE'],
    ['DELETE', '/denuncias', 'GET, HEAD, POST'],
    ['OPTIONS', '/denuncias', 'GET, HEAD, POST'],
    ['GET', '/auth/login', 'POST'],
    ['HEAD', '/auth/login', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
    ['PUT', '/denuncias/resumen', 'GET, HEAD'],
    ['GET', '/denuncias/importar', 'POST'],
    ['PUT', '/docs/json', 'GET, HEAD'],
  ])('%s %s → 405, Allow: %s', async (method, path, allow) => {
    const res = await send(method, path)
    expect(res.allow).toBe(allow)
    if (method === 'HEAD') expect(res.status).toBe(405)
    else expectError(res, 'METODO_NO_PERMITIDO')
  })

  it('the methods Allow names are answered', async () => {
    expect((await send('HEAD', '/denuncias')).status).toBe(200)
    expect((await send('GET', '/denuncias/')).status).toBe(200)
    expect((await send('GET', '/health')).status).toBe(200)
  })

  it('unknown paths stay 404, a known module\'s unknown tail too', async () => {
    expectError(await send('TRACE', '/nada'), 'MODULO_NO_ENCONTRADO')
    expectError(await send('PATCH', '/denuncias/DEN-2026-00001/extra'), 'RUTA_NO_ENCONTRADA')
    expectError(await send('GET', '/auth/nada'), 'RUTA_NO_ENCONTRADA')
  })

  it('the token is checked first, as for a 404, and no body is read', async () => {
    expectError(await send('PATCH', '/denuncias', { token: null }), 'TOKEN_NO_PROPORCIONADO')
    // A public path needs none.
    expect((await send('GET', '/auth/login', { token: null })).status).toBe(405)
    // Not JSON, and past 1 MiB: still the 405, not a 415 or 413.
    const res = await send('PATCH', '/denuncias', { headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(2 * 1024 * 1024) })
    expectError(res, 'METODO_NO_PERMITIDO')
  })

  it('with CORS: a preflight is answered, OPTIONS is in Allow, and another OPTIONS is a 405', async () => {
    const preflight = await send('OPTIONS', '/denuncias/DEN-2026-00001', { to: corsBase, token: null, headers: { origin: ALLOWED, 'access-control-request-method': 'PUT' } })
    expect(preflight.status).toBe(204)
    const trace = await send('TRACE', '/denuncias', { to: corsBase, token: corsToken })
    expectError(trace, 'METODO_NO_PERMITIDO')
    expect(trace.allow).toBe('GET, HEAD, POST, OPTIONS')
    // From an allowed origin an OPTIONS is a preflight even without Access-Control-Request-Method, never a text/plain 400.
    const bare = await send('OPTIONS', '/denuncias', { to: corsBase, token: null, headers: { origin: ALLOWED } })
    expect(bare.status).toBe(204)
    const plain = await send('OPTIONS', '/denuncias', { to: corsBase, token: corsToken })
    expectError(plain, 'METODO_NO_PERMITIDO')
    expect(plain.allow).toBe('GET, HEAD, POST, OPTIONS')
  })

  it('the document lists only the methods each path has', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
    const methods = new Set(Object.values(doc.paths as Record<string, Record<string, unknown>>).flatMap((item) => Object.keys(item)))
    expect([...methods].sort()).toEqual(['delete', 'get', 'post', 'put'])
    expect(doc.paths['/denuncias/{id}'].patch).toBeUndefined()
  })
})
