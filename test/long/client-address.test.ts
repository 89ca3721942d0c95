/**
 * The client address cannot be forged (docs/operator-guide.md "Client address and TRUST_PROXY"), on a real listening
 * server: requests reach it from 127.0.0.1, and X-Forwarded-For is read only
 * when TRUST_PROXY names that peer. RATE_LIMIT_IP_EXEMPT lets an address
 * past the per-IP limit while the token limit still holds. /docs*, /ready
 * and the console's files have a per-IP window of their own
 * (RATE_LIMIT_DOCS_*), /health none.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { login } from '../helpers/http.js'
import { errorOf } from '../helpers/errors.js'
import { listenApp } from '../helpers/free-port.js'

const TOO_MANY = errorOf('DEMASIADAS_PETICIONES')

let h: Harness
beforeAll(async () => { h = await createHarness() })
afterAll(async () => { await h.close() })
// Every test counts 127.0.0.1 afresh (instances of one harness share the counters).
beforeEach(async () => { await h.flushStores() })

interface Got { status: number, body: any, limit: string | null, remaining: string | null, retryAfter: string | null }

/** A listening instance; requests come from 127.0.0.1 over TCP. */
async function serve (env: Record<string, string>): Promise<{ app: FastifyInstance, get: (path: string, headers?: Record<string, string>) => Promise<Got> }> {
  const app = await h.app({ env })
  const base = await listenApp(app)
  return {
    app,
    get: async (path, headers = {}) => {
      const res = await fetch(`${base}${path}`, { headers })
      const text = await res.text()
      return { status: res.status, body: text === '' ? undefined : JSON.parse(text), limit: res.headers.get('ratelimit-limit'), remaining: res.headers.get('ratelimit-remaining'), retryAfter: res.headers.get('retry-after') }
    },
  }
}

let seq = 0
/** An X-Forwarded-For value never used before in this file. */
const forged = (): string => `203.0.113.${++seq}`

describe('X-Forwarded-For from an untrusted peer is ignored', () => {
  for (const trust of ['10.0.0.0/8,172.16.0.0/12', '192.0.2.1', 'fd00::/8']) {
    it(`TRUST_PROXY=${trust}: the per-IP limit counts 127.0.0.1 whatever the header says`, async () => {
      const { app, get } = await serve({ TRUST_PROXY: trust, RATE_LIMIT_IP_MAX: '3', RATE_LIMIT_IP_WINDOW: '60s' })
      try {
        const seen = []
        for (let i = 0; i < 3; i++) seen.push(await get('/me', { 'x-forwarded-for': forged() }))
        expect(seen.map((r) => [r.status, r.remaining])).toEqual([[401, '2'], [401, '1'], [401, '0']])
        // A new forged address, several, or none: still 127.0.0.1, still limited.
        for (const xff of [forged(), `${forged()}, ${forged()}`, undefined]) {
          const res = await get('/me', xff === undefined ? {} : { 'x-forwarded-for': xff })
          expect({ status: res.status, body: res.body }).toEqual({ status: 429, body: TOO_MANY })
          expect(Number(res.retryAfter)).toBeGreaterThan(0)
        }
      } finally { await h.closeApp(app) }
    })
  }

  it('TRUST_PROXY=127.0.0.1: the header is honoured, each forwarded client counted apart', async () => {
    const { app, get } = await serve({ TRUST_PROXY: '127.0.0.1', RATE_LIMIT_IP_MAX: '3', RATE_LIMIT_IP_WINDOW: '60s' })
    try {
      const client = forged()
      for (let i = 0; i < 3; i++) expect((await get('/me', { 'x-forwarded-for': client })).remaining).toBe(String(2 - i))
      expect((await get('/me', { 'x-forwarded-for': client })).status).toBe(429)
      // Another client behind the proxy, and the proxy itself, have budgets of their own.
      expect((await get('/me', { 'x-forwarded-for': forged() })).remaining).toBe('2')
      expect((await get('/me')).remaining).toBe('2')
    } finally { await h.closeApp(app) }
  })

  it('TRUST_PROXY=loopback (a named range, IPv4 and IPv6) is honoured from 127.0.0.1 too', async () => {
    const { app, get } = await serve({ TRUST_PROXY: 'loopback', RATE_LIMIT_IP_MAX: '1', RATE_LIMIT_IP_WINDOW: '60s' })
    try {
      for (let i = 0; i < 3; i++) expect((await get('/me', { 'x-forwarded-for': forged() })).status).toBe(401)
    } finally { await h.closeApp(app) }
  })
})

describe('a hop count', () => {
  it('is still accepted, and the start warns that it is forgeable; addresses start silently', async () => {
    const warnings = async (trust: string): Promise<string[]> => {
      const lines: string[] = []
      const app = await h.app({ env: { TRUST_PROXY: trust, LOG_LEVEL: 'warn' }, logStream: new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } }) })
      await h.closeApp(app)
      return lines.map((l) => JSON.parse(l) as { msg: string }).map((l) => l.msg).filter((m) => m.includes('TRUST_PROXY'))
    }
    const [hop] = await warnings('1')
    expect(hop).toMatch(/^TRUST_PROXY=1 is a hop count: a client that reaches this instance without the proxy can choose its address/)
    expect(hop).toContain('TRUST_PROXY=10.0.0.0/8,127.0.0.1')
    expect(await warnings('true')).toHaveLength(1)
    expect(await warnings('10.0.0.0/8,127.0.0.1')).toEqual([])
  })
})

describe('RATE_LIMIT_IP_EXEMPT', () => {
  const env = { RATE_LIMIT_IP_MAX: '3', RATE_LIMIT_IP_WINDOW: '60s', RATE_LIMIT_TOKEN_MAX: '5', RATE_LIMIT_TOKEN_WINDOW: '60s' }

  it('an exempt address passes the per-IP limit; the token limit still applies; other addresses are limited', async () => {
    const app = await h.app({ env: { ...env, RATE_LIMIT_IP_EXEMPT: '198.51.100.0/24, fd00:88::/32' } })
    const token = await login(app)
    const from = async (ip: string, tok?: string): Promise<{ status: number, limit: unknown, remaining: unknown }> => {
      const res = await app.inject({ url: '/me', remoteAddress: ip, headers: tok === undefined ? {} : { authorization: `Bearer ${tok}` } })
      return { status: res.statusCode, limit: res.headers['ratelimit-limit'], remaining: res.headers['ratelimit-remaining'] }
    }
    // Unauthenticated: ten requests from a station's address, no limit counted, no RateLimit headers.
    for (const ip of ['198.51.100.7', 'fd00:88::7', '::ffff:198.51.100.8']) {
      for (let i = 0; i < 10; i++) expect(await from(ip), ip).toEqual({ status: 401, limit: undefined, remaining: undefined })
    }
    // With a token (login took none of its budget): the token limit, 5, and only that.
    const station = []
    for (let i = 0; i < 6; i++) station.push(await from('198.51.100.9', token))
    expect(station).toEqual([
      ...[4, 3, 2, 1, 0].map((r) => ({ status: 200, limit: '5', remaining: String(r) })),
      { status: 429, limit: '5', remaining: '0' },
    ])
    // The token is spent from every address; an address outside the list keeps its own limit of 3.
    expect((await from('198.51.100.10', token)).status).toBe(429)
    const outside = []
    for (let i = 0; i < 4; i++) outside.push((await from('198.51.101.1')).status)
    expect(outside).toEqual([401, 401, 401, 429])
    // A login from an exempt address is not counted either.
    for (let i = 0; i < 5; i++) {
      const res = await app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '198.51.100.11', payload: { username: 'nadie', password: 'x' } })
      expect(res.statusCode).toBe(401)
    }
  })

  it('on a listening server behind a trusted proxy, the forwarded client address is what is exempt', async () => {
    const { app, get } = await serve({ ...env, TRUST_PROXY: '127.0.0.1', RATE_LIMIT_IP_EXEMPT: '198.51.100.0/24' })
    try {
      for (let i = 0; i < 6; i++) expect((await get('/me', { 'x-forwarded-for': '198.51.100.20' })).status).toBe(401)
      const limited = []
      for (let i = 0; i < 4; i++) limited.push((await get('/me', { 'x-forwarded-for': '192.0.2.20' })).status)
      expect(limited).toEqual([401, 401, 401, 429])
    } finally { await h.closeApp(app) }
  })
})

describe('/docs*, /ready and /consola*: a per-IP window of their own', () => {
  const env = { RATE_LIMIT_DOCS_MAX: '4', RATE_LIMIT_DOCS_WINDOW: '60s', RATE_LIMIT_IP_MAX: '2', RATE_LIMIT_IP_WINDOW: '60s' }
  const get = async (app: FastifyInstance, url: string, ip: string): Promise<{ status: number, body: unknown, limit: unknown, remaining: unknown, retryAfter: unknown }> => {
    const res = await app.inject({ url, remoteAddress: ip })
    return { status: res.statusCode, body: res.statusCode === 429 ? res.json() : undefined, limit: res.headers['ratelimit-limit'], remaining: res.headers['ratelimit-remaining'], retryAfter: res.headers['retry-after'] }
  }

  it('/docs/json: RATE_LIMIT_DOCS_MAX per address, then 429 in the envelope with Retry-After; other addresses unaffected', async () => {
    const app = await h.app({ env })
    const seen = []
    for (let i = 0; i < 4; i++) seen.push(await get(app, i % 2 === 0 ? '/docs/json' : '/docs/static/swagger-initializer.js', '10.41.0.1'))
    expect(seen.map((r) => [r.status, r.limit, r.remaining])).toEqual([[200, '4', '3'], [200, '4', '2'], [200, '4', '1'], [200, '4', '0']])
    const limited = await get(app, '/docs/json', '10.41.0.1')
    expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: TOO_MANY })
    expect(Number(limited.retryAfter)).toBeGreaterThan(0)
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60)
    expect((await get(app, '/docs', '10.41.0.1')).status).toBe(429)
    expect((await get(app, '/docs/json', '10.41.0.2')).status).toBe(200)
    // The normal per-IP limit (2) is a separate count: the address still has it.
    expect((await get(app, '/me', '10.41.0.1')).remaining).toBe('1')
    // A revalidation is counted too (it is still a request).
    const app2 = await h.app({ env: { ...env, RATE_LIMIT_DOCS_MAX: '1' } })
    const first = await app2.inject({ url: '/docs/json', remoteAddress: '10.41.0.3' })
    const again = await app2.inject({ url: '/docs/json', remoteAddress: '10.41.0.3', headers: { 'if-none-match': String(first.headers.etag) } })
    expect([first.statusCode, again.statusCode]).toEqual([200, 429])
  })

  it('/ready: the same window size, counted apart from /docs; no RateLimit headers but on the 429; /health never limited', async () => {
    const app = await h.app({ env })
    for (let i = 0; i < 4; i++) expect(await get(app, '/ready', '10.42.0.1')).toEqual({ status: 200, body: undefined, limit: undefined, remaining: undefined, retryAfter: undefined })
    const limited = await get(app, '/ready', '10.42.0.1')
    expect({ status: limited.status, body: limited.body, limit: limited.limit }).toEqual({ status: 429, body: TOO_MANY, limit: '4' })
    expect(Number(limited.retryAfter)).toBeGreaterThan(0)
    expect((await get(app, '/docs/json', '10.42.0.1')).status).toBe(200)
    expect((await get(app, '/ready', '10.42.0.2')).status).toBe(200)
    for (let i = 0; i < 20; i++) expect(await get(app, '/health', '10.42.0.1')).toEqual({ status: 200, body: undefined, limit: undefined, remaining: undefined, retryAfter: undefined })
  })

  it('the console\'s files: a window of the same size of their own, apart from /docs and from the per-IP limit of logins', async () => {
    const app = await h.app({ env })
    const seen = []
    for (let i = 0; i < 4; i++) seen.push(await get(app, i % 2 === 0 ? '/consola' : '/consola/assets/no-existe.js', '10.44.0.1'))
    // 200 or 404 with a built console, 503 without: never 429, and the window's own headers.
    expect(seen.map((r) => [r.status === 429, r.limit, r.remaining])).toEqual([[false, '4', '3'], [false, '4', '2'], [false, '4', '1'], [false, '4', '0']])
    const limited = await get(app, '/consola', '10.44.0.1')
    expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: TOO_MANY })
    expect(Number(limited.retryAfter)).toBeGreaterThan(0)
    expect((await get(app, '/docs/json', '10.44.0.1')).remaining).toBe('3')
    expect((await get(app, '/me', '10.44.0.1')).remaining).toBe('1')
    expect((await get(app, '/consola', '10.44.0.2')).status).not.toBe(429)
  })

  it('an address in RATE_LIMIT_IP_EXEMPT skips this window too', async () => {
    const app = await h.app({ env: { ...env, RATE_LIMIT_IP_EXEMPT: '10.43.0.0/16' } })
    for (let i = 0; i < 8; i++) {
      expect((await get(app, '/docs/json', '10.43.0.1')).status).toBe(200)
      expect((await get(app, '/ready', '10.43.0.1')).status).toBe(200)
    }
  })
})
