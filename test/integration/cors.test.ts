/**
 * CORS (docs/operator-guide.md "CORS"): CORS_ORIGINS lets pages on those origins call the API,
 * preflight included; other origins get no CORS header; without
 * CORS_ORIGINS no CORS header is ever sent and OPTIONS is a method no path has.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { startTestApp } from '../helpers/test-app.js'

const ALLOWED = 'https://intranet.policia.example'
const OTHER = 'https://evil.example'
let h: Harness
let app: FastifyInstance
let plain: FastifyInstance
let token: string

beforeAll(async () => {
  ({ h, app, token } = await startTestApp({ env: { CORS_ORIGINS: `${ALLOWED},http://localhost:5173` } }))
  plain = await h.app()
})
afterAll(async () => { await h.close() })

const preflight = (target: FastifyInstance, origin: string, method = 'PUT') => target.inject({
  method: 'OPTIONS',
  url: '/denuncias/DEN-2026-00001',
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
})

describe('CORS_ORIGINS', () => {
  it('answers a preflight from an allowed origin with the methods and headers the API uses, no token needed', async () => {
    const res = await preflight(app, ALLOWED)
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED)
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/PUT/)
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/DELETE/)
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization')
    expect(res.headers['access-control-max-age']).toBe('600')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('marks an actual call from an allowed origin, and exposes the rate-limit headers and the request id', async () => {
    const res = await app.inject({ method: 'GET', url: '/denuncias', headers: { origin: ALLOWED, authorization: `Bearer ${token}` } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED)
    expect(String(res.headers['access-control-expose-headers'])).toMatch(/RateLimit-Remaining.*X-Request-Id/)
    expect(res.headers.vary).toMatch(/Origin/)
    // An error answer carries it too, so the page can read the envelope.
    const denied = await app.inject({ method: 'GET', url: '/denuncias', headers: { origin: 'http://localhost:5173' } })
    expect(denied.statusCode).toBe(401)
    expect(denied.headers['access-control-allow-origin']).toBe('http://localhost:5173')
  })

  it('gives another origin no CORS header, on a preflight or a call', async () => {
    const pre = await preflight(app, OTHER)
    expect(pre.headers['access-control-allow-origin']).toBeUndefined()
    expect(pre.headers['access-control-allow-methods']).toBeUndefined()
    const res = await app.inject({ method: 'GET', url: '/denuncias', headers: { origin: OTHER, authorization: `Bearer ${token}` } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    // An origin that only starts like an allowed one is another origin.
    const lookalike = await app.inject({ method: 'GET', url: '/health', headers: { origin: `${ALLOWED}.evil.example` } })
    expect(lookalike.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('without CORS_ORIGINS sends no CORS header and a preflight is not answered (a method the path does not have)', async () => {
    const res = await plain.inject({ method: 'GET', url: '/health', headers: { origin: ALLOWED } })
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const pre = await preflight(plain, ALLOWED)
    expect(pre.statusCode).not.toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBeUndefined()
  })
})
