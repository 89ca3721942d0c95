/**
 * Responses that carry personal data are not cached or sniffed (docs/operator-guide.md "Security headers"):
 * every API response — a record, a list, an error, a 401, a 429, a 404, a
 * CORS preflight — has Cache-Control: no-store, nosniff, no-referrer and
 * frame denial; HSTS only with HSTS=true. /docs keeps a CSP that lets the
 * explorer run; /docs/json is built once and answered with its ETag (304 on
 * a revalidation); the explorer's static assets may be cached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { call, type Res } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

let h: Harness, app: FastifyInstance, token: string
let id: string

beforeAll(async () => {
  ({ h, app, token } = await startTestApp({ env: { CORS_ORIGINS: 'https://intranet.policia.example' } }))
  const created = await call(app, 'POST', '/denuncias', { token, body: { denunciante_nombre: 'Juan Pérez', denunciante_dni: '12345678Z', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Sustracción de cartera' } })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  id = created.body.data._id as string
})
afterAll(async () => { await h.close() })

/** The headers every API response carries. */
function expectApiHeaders (res: Res, what: string): void {
  expect({
    what,
    cache: res.headers['cache-control'],
    nosniff: res.headers['x-content-type-options'],
    referrer: res.headers['referrer-policy'],
    frame: res.headers['x-frame-options'],
    ancestors: /(?:^|;)\s*frame-ancestors 'none'/.test(String(res.headers['content-security-policy'])),
    hsts: res.headers['strict-transport-security'],
  }).toEqual({ what, cache: 'no-store', nosniff: 'nosniff', referrer: 'no-referrer', frame: 'DENY', ancestors: true, hsts: undefined })
}

describe('security headers on API responses', () => {
  it('a record, a list, a history and the caller carry them', async () => {
    const record = await call(app, 'GET', `/denuncias/${id}`, { token })
    expect(record.status).toBe(200)
    expect(record.body.data.denunciante_dni).toBe('12345678Z')
    expectApiHeaders(record, 'record')
    const list = await call(app, 'GET', '/denuncias?limit=5', { token })
    expect(list.status).toBe(200)
    expectApiHeaders(list, 'list')
    expectApiHeaders(await call(app, 'GET', `/denuncias/${id}/historial`, { token }), 'history')
    expectApiHeaders(await call(app, 'GET', '/me', { token }), 'me')
    // A JSON API renders nothing: its CSP allows no source at all.
    expect(String(record.headers['content-security-policy'])).toMatch(/^default-src 'none'/)
  })

  it('errors carry them too: 400, 401, 404 (record, module, route), a failed login', async () => {
    const bad = await call(app, 'POST', '/denuncias', { token, body: { tipo: 'no-existe' } })
    expect(bad.status).toBe(400)
    expectApiHeaders(bad, '400')
    const noToken = await call(app, 'GET', `/denuncias/${id}`)
    expectError(noToken, 'TOKEN_NO_PROPORCIONADO')
    expectApiHeaders(noToken, '401')
    const missing = await call(app, 'GET', '/denuncias/DEN-2020-99999', { token })
    expect(missing.status).toBe(404)
    expectApiHeaders(missing, '404 record')
    expectApiHeaders(await call(app, 'GET', '/no-existe', { token }), '404 module')
    // Errors Fastify's router raises before any hook: a malformed URL, an overlong id.
    const malformed = await call(app, 'GET', '/%zz', { token })
    expectError(malformed, 'DATOS_INVALIDOS')
    expectApiHeaders(malformed, 'malformed URL')
    const overlong = await call(app, 'GET', `/denuncias/${'x'.repeat(300)}`, { token })
    expect(overlong.status).toBe(404)
    expectApiHeaders(overlong, 'overlong id')
    const failed = await call(app, 'POST', '/auth/login', { body: { username: 'admin', password: 'wrong-password' } })
    expect(failed.status).toBe(401)
    expectApiHeaders(failed, 'failed login')
  })

  it('a 429 and a CORS preflight carry them', async () => {
    const limited = await h.app({ env: { RATE_LIMIT_IP_MAX: '1', RATE_LIMIT_IP_WINDOW: '60s' } })
    await limited.inject({ url: '/me', remoteAddress: '10.31.0.1' })
    const res = await limited.inject({ url: '/me', remoteAddress: '10.31.0.1' })
    expect(res.statusCode).toBe(429)
    expectApiHeaders({ status: res.statusCode, body: res.json(), headers: res.headers }, '429')
    const preflight = await app.inject({ method: 'OPTIONS', url: '/denuncias', headers: { origin: 'https://intranet.policia.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } })
    expect(preflight.statusCode).toBe(204)
    expectApiHeaders({ status: preflight.statusCode, body: undefined, headers: preflight.headers }, 'preflight')
  })

  it('/health and /ready carry them', async () => {
    expectApiHeaders(await call(app, 'GET', '/health'), 'health')
    expectApiHeaders(await call(app, 'GET', '/ready'), 'ready')
  })

  it('HSTS only with HSTS=true: one year, without includeSubDomains', async () => {
    const hsts = await h.app({ env: { HSTS: 'true' } })
    const res = await call(hsts, 'GET', '/health')
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000')
    const error = await call(hsts, 'GET', '/me')
    expect(error.status).toBe(401)
    expect(error.headers['strict-transport-security']).toBe('max-age=31536000')
    expect((await call(app, 'GET', '/health')).headers['strict-transport-security']).toBeUndefined()
  })
})

describe('/docs', () => {
  it('the explorer keeps a CSP that lets it run (own scripts, inline styles), framing denied, not cached', async () => {
    const html = await call(app, 'GET', '/docs', { headers: { accept: 'text/html' } })
    expect(html.status).toBe(200)
    const csp = String(html.headers['content-security-policy'])
    for (const d of ["default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(d)
    expect(html.headers['x-frame-options']).toBe('DENY')
    expect(html.headers['x-content-type-options']).toBe('nosniff')
    expect(html.headers['cache-control']).toBe('no-store')
  })

  it("the explorer's static assets may be cached, revalidated by their validators", async () => {
    const asset = await call(app, 'GET', '/docs/static/swagger-ui-bundle.js')
    expect(asset.status).toBe(200)
    expect(asset.headers['cache-control']).toBe('public, max-age=0')
    expect(asset.headers.etag).toBeDefined()
    expect(asset.headers['x-content-type-options']).toBe('nosniff')
    const again = await app.inject({ url: '/docs/static/swagger-ui-bundle.js', headers: { 'if-none-match': String(asset.headers.etag) } })
    expect(again.statusCode).toBe(304)
  })

  it('/docs/json has an ETag; If-None-Match with it is 304 with no body; another tag is 200; /docs and /docs/yaml too', async () => {
    const first = await app.inject({ url: '/docs/json' })
    expect(first.statusCode).toBe(200)
    const etag = first.headers.etag as string
    expect(etag).toMatch(/^"[\w-]{27}"$/)
    expect(first.headers['cache-control']).toBe('no-cache')
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(first.json().openapi).toMatch(/^3\.1\./)
    // Built once: the same bytes and tag every time.
    const second = await app.inject({ url: '/docs/json' })
    expect({ etag: second.headers.etag, body: second.body }).toEqual({ etag, body: first.body })
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const revalidated = await app.inject({ url: '/docs/json', headers: { 'if-none-match': inm } })
      expect({ inm, status: revalidated.statusCode, body: revalidated.body, etag: revalidated.headers.etag }).toEqual({ inm, status: 304, body: '', etag })
    }
    const stale = await app.inject({ url: '/docs/json', headers: { 'if-none-match': '"not-this-one"' } })
    expect({ status: stale.statusCode, body: stale.body }).toEqual({ status: 200, body: first.body })
    // /docs for a client that is no browser is the same document.
    const plain = await app.inject({ url: '/docs', headers: { 'if-none-match': etag } })
    expect({ status: plain.statusCode, body: plain.body, vary: plain.headers.vary }).toEqual({ status: 304, body: '', vary: 'Accept' })
    expect((await app.inject({ url: '/docs', headers: { accept: 'text/html' } })).headers.vary).toBe('Accept')
    const yaml = await app.inject({ url: '/docs/yaml' })
    expect(yaml.statusCode).toBe(200)
    expect(yaml.body).toMatch(/^openapi: 3\.1\./)
    expect(yaml.headers.etag).not.toBe(etag)
    expect((await app.inject({ url: '/docs/yaml', headers: { 'if-none-match': String(yaml.headers.etag) } })).statusCode).toBe(304)
  })
})
