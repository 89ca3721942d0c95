/**
 * Rate limits (docs/user-guide.md "Rate limits") and the login lock-out (same section), through HTTP:
 * per-token fixed windows for requests with a valid token, per-IP ones for
 * any other (no token, a bad, expired or revoked one), counted across
 * instances, so twenty officers behind one address work on; the RateLimit-*
 * headers on every response but /health and /ready, Retry-After
 * on a 429, X-Forwarded-For honoured only from TRUST_PROXY (addresses or a
 * hop count), and failed logins locking a username for one address (10) or
 * for every client without a device value (100) whatever the password (the
 * device value: test/integration/login-device.test.ts).
 */
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import type { Res } from '../helpers/http.js'
import { errorOf } from '../helpers/errors.js'
import { createUser } from '../helpers/users.js'

const TOO_MANY = errorOf('DEMASIADAS_PETICIONES')
const BAD_LOGIN = errorOf('CREDENCIALES_INVALIDAS')
const MISSING_USR = '/usuarios/USR-2020-99999'

let h: Harness
let setup: FastifyInstance // high limits: users and tokens for the tests
beforeAll(async () => {
  h = await createHarness()
  setup = await h.app()
})
afterAll(async () => { await h.close() })

// Counters are shared by every instance of the harness: each test uses addresses of its own.
let ipSeq = 0
const newIp = (): string => { ipSeq++; return `10.77.${Math.floor(ipSeq / 250)}.${(ipSeq % 250) + 1}` }
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

interface Opts { ip?: string, token?: string, body?: unknown, headers?: Record<string, string>, raw?: string }
async function req (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, o: Opts = {}): Promise<Res & { raw: string }> {
  const headers: Record<string, string> = { ...o.headers }
  if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`
  let payload = o.raw
  if (payload === undefined && o.body !== undefined) { payload = JSON.stringify(o.body); headers['content-type'] ??= 'application/json' }
  const res = await app.inject({ method, url, headers, remoteAddress: o.ip ?? newIp(), ...(payload !== undefined && { payload }) })
  let body: unknown
  try { body = res.json() } catch { body = res.body }
  return { status: res.statusCode, body, headers: res.headers, raw: res.body }
}
const login = (app: FastifyInstance, username: string, password: string, ip?: string): Promise<Res & { raw: string }> =>
  req(app, 'POST', '/auth/login', { body: { username, password }, ...(ip !== undefined && { ip }) })
async function token (app: FastifyInstance = setup, username = ADMIN.username, password = ADMIN.password): Promise<string> {
  const res = await login(app, username, password)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.token as string
}
/** A new user's username (made on `setup`, from an address of its own: counters are shared). */
const newUsername = async (): Promise<string> => (await createUser(setup, await token(), 'consulta', {}, newIp())).username

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')
const claimsOf = (tok: string): Record<string, unknown> => JSON.parse(Buffer.from(tok.split('.')[1]!, 'base64url').toString('utf8'))
/** A token signed with the service's own secret: well signed, whatever its claims say. */
function forge (claims: Record<string, unknown>): string {
  const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`
  return `${unsigned}.${createHmac('sha256', h.config.jwtSecret).update(unsigned).digest('base64url')}`
}
/** `tok` with the same claims but expired a minute ago. */
const expired = (tok: string): string => { const now = Math.floor(Date.now() / 1000); return forge({ ...claimsOf(tok), iat: now - 3600, exp: now - 60 }) }

/** RateLimit-* headers as numbers (NaN when absent). */
function rl (res: Res): { limit: number, remaining: number, reset: number } {
  const n = (name: string): number => (res.headers[name] === undefined ? NaN : Number(res.headers[name]))
  return { limit: n('ratelimit-limit'), remaining: n('ratelimit-remaining'), reset: n('ratelimit-reset') }
}
function expectHeaders (res: Res, limit: number, remaining: number, windowS: number): void {
  const got = rl(res)
  expect({ status: res.status, limit: got.limit, remaining: got.remaining }).toEqual({ status: res.status, limit, remaining })
  expect(String(res.headers['ratelimit-reset'])).toMatch(/^\d+$/)
  expect(got.reset).toBeGreaterThanOrEqual(1)
  expect(got.reset).toBeLessThanOrEqual(windowS)
}
/** A 429 is exactly the envelope, with Retry-After in whole seconds (≤ maxS). */
function expect429 (res: Res & { raw: string }, maxS: number): void {
  expect({ status: res.status, body: res.body }).toEqual({ status: 429, body: TOO_MANY })
  expect(res.raw).not.toMatch(/detalles|stack/)
  expect(String(res.headers['retry-after'])).toMatch(/^[1-9]\d*$/)
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(maxS)
}

describe('per-IP limit: requests without a valid token', () => {
  it('the 6th unauthenticated request of an address in the window is 429 (a bad, expired, revoked or never-issued token is none); that address\'s tokens are not counted and pass; passes again after the window', async () => {
    const app = await h.app({ env: { RATE_LIMIT_IP_MAX: '5', RATE_LIMIT_IP_WINDOW: '2s' } })
    const tok = await token(app)
    const revoked = await token(app)
    expect((await req(app, 'POST', '/auth/logout', { token: revoked })).status).toBe(200)
    const ip = newIp()
    const start = Date.now()
    const seen = [
      await req(app, 'GET', '/me', { ip }), // 401 no token
      await req(app, 'GET', '/me', { ip, token: tok }), // 200: counted against the token only
      await req(app, 'GET', '/no-existe', { ip, token: 'not.a.token' }), // 401 bad token
      await login(app, ADMIN.username, 'wrong-password', ip), // 401 login
      await req(app, 'GET', '/health', { ip }), // not counted
      await req(app, 'GET', MISSING_USR, { ip, token: expired(tok) }), // 401 expired
      await req(app, 'GET', '/me', { ip, token: tok }), // 200
      await req(app, 'GET', '/me', { ip, token: revoked }), // 401 revoked: well signed, no credential
    ]
    expect(seen.map((r) => r.status)).toEqual([401, 200, 401, 401, 200, 401, 200, 401])
    expect(seen.map((r) => rl(r).remaining)).toEqual([4, 999999, 3, 2, NaN, 1, 999998, 0])
    const limited = await req(app, 'GET', '/me', { ip })
    expect429(limited, 2)
    expectHeaders(limited, 5, 0, 2)
    // Past the limit every unauthenticated request is refused: even a correct login, a bad, revoked or forged token.
    expect429(await login(app, ADMIN.username, ADMIN.password, ip), 2)
    expect429(await req(app, 'GET', '/me', { ip, token: 'not.a.token' }), 2)
    expect429(await req(app, 'GET', '/me', { ip, token: revoked }), 2)
    expect429(await req(app, 'GET', '/me', { ip, token: forge({ ...claimsOf(tok), jti: 'nunca-emitido' }) }), 2)
    // A valid token from the same address is not: it has its own budget.
    const mine = await req(app, 'GET', '/me', { ip, token: tok })
    expect(mine.status).toBe(200)
    expectHeaders(mine, 1000000, 999997, 3600)
    // Another address has its own budget.
    const other = await req(app, 'GET', '/me', { ip: newIp() })
    expect(other.status).toBe(401)
    expectHeaders(other, 5, 4, 2)
    // After the window the address passes again with a fresh budget.
    await sleep(Math.max(0, start + 2000 + 200 - Date.now()))
    const again = await req(app, 'GET', '/me', { ip })
    expect(again.status).toBe(401)
    expectHeaders(again, 5, 4, 2)
  })
})

describe('a station is not an attacker', () => {
  it('twenty officers\' tokens from one address, far past the per-IP limit, are not refused; one token past its own limit is; the address still limits the unauthenticated; on two instances', async () => {
    const env = { RATE_LIMIT_IP_MAX: '5', RATE_LIMIT_IP_WINDOW: '60s', RATE_LIMIT_TOKEN_MAX: '12', RATE_LIMIT_TOKEN_WINDOW: '60s' }
    const a = await h.app({ env })
    const b = await h.app({ env })
    const admin = await token()
    const officers: string[] = []
    for (let i = 0; i < 20; i++) {
      const { username } = await createUser(setup, admin, i % 2 === 0 ? 'agente' : 'oficial', {}, newIp())
      officers.push(await token(i % 2 === 0 ? a : b, username, PASSWORD)) // each login from an address of its own
    }
    const station = newIp()
    const statuses: number[] = []
    for (let round = 0; round < 10; round++) {
      for (const [i, tok] of officers.entries()) {
        const res = await req((round + i) % 2 === 0 ? a : b, 'GET', round % 2 === 0 ? '/me' : '/denuncias?limit=1', { ip: station, token: tok })
        statuses.push(res.status)
        expect(rl(res)).toMatchObject({ limit: 12, remaining: 12 - round - 1 })
      }
    }
    expect(statuses).toEqual(Array(200).fill(200))
    // One officer goes on: the 11th and 12th pass, the 13th is over that token's own limit.
    expect((await req(a, 'GET', '/me', { ip: station, token: officers[0] })).status).toBe(200)
    expect((await req(b, 'GET', '/me', { ip: station, token: officers[0] })).status).toBe(200)
    const over = await req(a, 'GET', '/me', { ip: station, token: officers[0] })
    expect429(over, 60)
    expectHeaders(over, 12, 0, 60)
    expect429(await req(b, 'GET', '/me', { ip: newIp(), token: officers[0] }), 60)
    // The others are untouched by it.
    const next = await req(b, 'GET', '/me', { ip: station, token: officers[1] })
    expect(next.status).toBe(200)
    expectHeaders(next, 12, 1, 60)
    // The station's address kept its whole per-IP budget for the unauthenticated: five, then 429.
    const anon = []
    for (let i = 0; i < 5; i++) anon.push(await req(i % 2 === 0 ? a : b, 'GET', '/me', { ip: station, ...(i === 1 && { token: 'not.a.token' }), ...(i === 3 && { token: expired(officers[2]!) }) }))
    expect(anon.map((r) => [r.status, rl(r).limit, rl(r).remaining])).toEqual([4, 3, 2, 1, 0].map((n) => [401, 5, n]))
    expect429(await login(a, ADMIN.username, ADMIN.password, station), 60)
    expect429(await req(b, 'GET', '/me', { ip: station, token: 'not.a.token' }), 60)
    // ...while its officers work on.
    expect((await req(a, 'GET', '/me', { ip: station, token: officers[3] })).status).toBe(200)
  })
})

describe('headers', () => {
  it('every counted response (200, 201, 400, 401, 403, 404, 409, 415) carries RateLimit-* of the window that counts it, Remaining falling by one', async () => {
    const app = await h.app({ env: { RATE_LIMIT_IP_MAX: '30', RATE_LIMIT_IP_WINDOW: '60s', RATE_LIMIT_TOKEN_MAX: '20', RATE_LIMIT_TOKEN_WINDOW: '60s' } })
    const admin = await token(app)
    const consulta = await token(app, await newUsername(), PASSWORD)
    const ip = newIp()
    const user = { username: 'rl.headers', password: PASSWORD, nombre: 'Cabeceras', rol: 'agente' }
    // With a valid token: the token's window.
    const authed = [
      await req(app, 'GET', '/me', { ip, token: admin }),
      await req(app, 'POST', '/usuarios', { ip, token: admin, body: user }),
      await req(app, 'POST', '/usuarios', { ip, token: admin, body: {} }),
      await req(app, 'POST', '/usuarios', { ip, token: admin, raw: '{"username":', headers: { 'content-type': 'application/json' } }),
      await req(app, 'GET', MISSING_USR, { ip, token: admin }),
      await req(app, 'GET', '/no-existe', { ip, token: admin }),
      await req(app, 'POST', '/usuarios', { ip, token: admin, body: user }),
      await req(app, 'POST', '/usuarios', { ip, token: admin, raw: 'x', headers: { 'content-type': 'text/plain' } }),
    ]
    expect(authed.map((r) => r.status)).toEqual([200, 201, 400, 400, 404, 404, 409, 415])
    authed.forEach((res, i) => expectHeaders(res, 20, 19 - i, 60))
    const forbidden = await req(app, 'GET', '/usuarios', { ip, token: consulta })
    expect(forbidden.status).toBe(403)
    expectHeaders(forbidden, 20, 19, 60)
    // Without one: the address's window, untouched by the requests above.
    const anon = [
      await req(app, 'GET', '/me', { ip }),
      await req(app, 'GET', '/me', { ip, token: 'not.a.token' }),
      await login(app, 'rl.headers', 'wrong', ip),
    ]
    expect(anon.map((r) => r.status)).toEqual([401, 401, 401])
    anon.forEach((res, i) => expectHeaders(res, 30, 29 - i, 60))
  })

  it('/health and /ready carry no RateLimit-* headers and are never limited', async () => {
    const app = await h.app({ env: { RATE_LIMIT_IP_MAX: '5', RATE_LIMIT_IP_WINDOW: '60s' } })
    const ip = newIp()
    for (let i = 0; i < 15; i++) {
      for (const url of ['/health', '/ready']) {
        const res = await req(app, 'GET', url, { ip })
        expect(res.status).toBe(200)
        for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']) expect(res.headers).not.toHaveProperty(name)
      }
    }
    // None of them counted.
    expectHeaders(await req(app, 'GET', '/me', { ip }), 5, 4, 60)
  })
})

describe('per-token limit', () => {
  it('a token is 429 after RATE_LIMIT_TOKEN_MAX requests from any address; a second token of the same user still works; headers show the token limit', async () => {
    const app = await h.app({ env: { RATE_LIMIT_TOKEN_MAX: '4', RATE_LIMIT_TOKEN_WINDOW: '60s', RATE_LIMIT_IP_MAX: '1000', RATE_LIMIT_IP_WINDOW: '60s' } })
    const t1 = await token(app)
    const t2 = await token(app)
    const ip = newIp()
    for (let i = 0; i < 4; i++) {
      const res = await req(app, 'GET', '/me', { ip, token: t1 })
      expect(res.status).toBe(200)
      expectHeaders(res, 4, 3 - i, 60)
    }
    const limited = await req(app, 'GET', '/me', { ip, token: t1 })
    expect429(limited, 60)
    expectHeaders(limited, 4, 0, 60)
    expect429(await req(app, 'GET', '/me', { ip: newIp(), token: t1 }), 60)
    const second = await req(app, 'GET', '/me', { ip, token: t2 })
    expect(second.status).toBe(200)
    expectHeaders(second, 4, 3, 60)
  })
})

describe('counted across instances', () => {
  it('requests alternating between two instances count together against the IP and the token limits', async () => {
    const env = { RATE_LIMIT_IP_MAX: '6', RATE_LIMIT_IP_WINDOW: '60s', RATE_LIMIT_TOKEN_MAX: '4', RATE_LIMIT_TOKEN_WINDOW: '60s' }
    const a = await h.app({ env })
    const b = await h.app({ env })
    const ip = newIp()
    for (let i = 0; i < 6; i++) {
      const res = await req(i % 2 === 0 ? a : b, 'GET', '/me', { ip })
      expect(res.status).toBe(401)
      expectHeaders(res, 6, 5 - i, 60)
    }
    expect429(await req(a, 'GET', '/me', { ip }), 60)
    expect429(await req(b, 'GET', '/me', { ip }), 60)

    const tok = await token(a)
    for (let i = 0; i < 4; i++) {
      const res = await req(i % 2 === 0 ? b : a, 'GET', '/me', { token: tok }) // a fresh address each time
      expect(res.status).toBe(200)
      expectHeaders(res, 4, 3 - i, 60)
    }
    expect429(await req(a, 'GET', '/me', { token: tok }), 60)
    expect429(await req(b, 'GET', '/me', { token: tok }), 60)
  })
})

describe('client address and TRUST_PROXY', () => {
  const env = { RATE_LIMIT_IP_MAX: '3', RATE_LIMIT_IP_WINDOW: '60s' }

  it('without TRUST_PROXY, X-Forwarded-For is ignored: spoofing new addresses does not escape the limit', async () => {
    const app = await h.app({ env })
    const ip = newIp()
    for (let i = 0; i < 3; i++) {
      const res = await req(app, 'GET', '/me', { ip, headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } })
      expectHeaders(res, 3, 2 - i, 60)
    }
    expect429(await req(app, 'GET', '/me', { ip, headers: { 'x-forwarded-for': '203.0.113.99' } }), 60)
    expect429(await req(app, 'GET', '/me', { ip }), 60)
  })

  it('with TRUST_PROXY the forwarded client is counted; from an untrusted peer the peer is counted', async () => {
    const app = await h.app({ env: { ...env, TRUST_PROXY: '127.0.0.1' } })
    const proxy = '127.0.0.1'
    const via = (client: string): Opts => ({ ip: proxy, headers: { 'x-forwarded-for': client } })
    for (let i = 0; i < 3; i++) expectHeaders(await req(app, 'GET', '/me', via('198.51.100.1')), 3, 2 - i, 60)
    expect429(await req(app, 'GET', '/me', via('198.51.100.1')), 60)
    // A second forwarded client has its own budget, and so has the proxy itself.
    expectHeaders(await req(app, 'GET', '/me', via('198.51.100.2')), 3, 2, 60)
    expectHeaders(await req(app, 'GET', '/me', { ip: proxy }), 3, 2, 60)
    // An untrusted peer's X-Forwarded-For is ignored: the peer's own address is counted.
    const peer = newIp()
    for (let i = 0; i < 3; i++) {
      expectHeaders(await req(app, 'GET', '/me', { ip: peer, headers: { 'x-forwarded-for': '198.51.100.3' } }), 3, 2 - i, 60)
    }
    expect429(await req(app, 'GET', '/me', { ip: peer, headers: { 'x-forwarded-for': '198.51.100.4' } }), 60)
    expectHeaders(await req(app, 'GET', '/me', via('198.51.100.3')), 3, 2, 60)
    // Addresses a client prepends to X-Forwarded-For are not trusted: the one the proxy saw counts.
    expectHeaders(await req(app, 'GET', '/me', via('6.6.6.6, 198.51.100.3')), 3, 1, 60)
    expectHeaders(await req(app, 'GET', '/me', via('7.7.7.7, 198.51.100.3')), 3, 0, 60)
    expect429(await req(app, 'GET', '/me', via('8.8.8.8, 198.51.100.3')), 60)
  })

  it('TRUST_PROXY=1 (a hop count): the client is the last X-Forwarded-For entry, whichever balancer address it came through', async () => {
    const app = await h.app({ env: { ...env, TRUST_PROXY: '1' } })
    try {
      const client = newIp()
      const via = (xff: string): Opts => ({ ip: newIp(), headers: { 'x-forwarded-for': xff } }) // a new balancer address each time
      for (let i = 0; i < 3; i++) expectHeaders(await req(app, 'GET', '/me', via(`6.6.6.${i}, ${client}`)), 3, 2 - i, 60)
      expect429(await req(app, 'GET', '/me', via(client)), 60)
      // Another client behind the same balancer has its own budget.
      const balancer = newIp()
      expectHeaders(await req(app, 'GET', '/me', { ip: balancer, headers: { 'x-forwarded-for': newIp() } }), 3, 2, 60)
      expectHeaders(await req(app, 'GET', '/me', { ip: balancer, headers: { 'x-forwarded-for': newIp() } }), 3, 2, 60)
      // Without X-Forwarded-For the peer itself is the client.
      expectHeaders(await req(app, 'GET', '/me', { ip: balancer }), 3, 2, 60)
    } finally { await h.closeApp(app) } // the embedded database serves 16 connections
  })

  it('TRUST_PROXY=2: the client is two hops back; what it wrote before that is ignored', async () => {
    const app = await h.app({ env: { ...env, TRUST_PROXY: '2' } })
    try {
      const client = newIp()
      const edge = newIp()
      for (let i = 0; i < 3; i++) {
        expectHeaders(await req(app, 'GET', '/me', { ip: newIp(), headers: { 'x-forwarded-for': `7.7.7.${i}, ${client}, ${edge}` } }), 3, 2 - i, 60)
      }
      expect429(await req(app, 'GET', '/me', { ip: newIp(), headers: { 'x-forwarded-for': `${client}, ${newIp()}` } }), 60)
      // The same edge proxy forwarding another client: a budget of its own.
      expectHeaders(await req(app, 'GET', '/me', { ip: newIp(), headers: { 'x-forwarded-for': `${newIp()}, ${edge}` } }), 3, 2, 60)
    } finally { await h.closeApp(app) } // the embedded database serves 16 connections
  })

  it('the login lock-out follows the real client behind the balancer', async () => {
    const app = await h.app({ env: { TRUST_PROXY: '1' } })
    try {
      const user = await newUsername()
      const balancer = newIp()
      const attacker = newIp()
      const via = (client: string): Opts => ({ ip: balancer, headers: { 'x-forwarded-for': client } })
      for (let i = 0; i < 10; i++) expect((await req(app, 'POST', '/auth/login', { ...via(attacker), body: { username: user, password: 'wrong' } })).status).toBe(401)
      expect429(await req(app, 'POST', '/auth/login', { ...via(attacker), body: { username: user, password: PASSWORD } }), 15 * 60)
      expect((await req(app, 'POST', '/auth/login', { ...via(newIp()), body: { username: user, password: PASSWORD } })).status).toBe(200)
    } finally { await h.closeApp(app) } // the embedded database serves 16 connections
  })
})

describe('login lock-out, for clients without a device value', () => {
  const LOCK_S = 15 * 60
  let a: FastifyInstance
  let b: FastifyInstance
  beforeAll(async () => {
    a = await h.app()
    b = await h.app()
  })
  /** Ten failed logins of `username` from `ip`, alternating instances. */
  const fail10 = async (username: string, ip: string): Promise<Array<Res & { raw: string }>> => {
    const out = []
    for (let i = 0; i < 10; i++) out.push(await login(i % 2 === 0 ? a : b, username, `wrong-${i}`, ip))
    return out
  }

  it('ten failures from one address lock the username for that address: 429 even with the right password, on any instance; other addresses and usernames unaffected', async () => {
    const victim = await newUsername()
    const bystander = await newUsername()
    const attacker = newIp()
    for (const res of await fail10(victim, attacker)) expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: BAD_LOGIN })
    const locked = await login(a, victim, PASSWORD, attacker)
    expect429(locked, LOCK_S)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(LOCK_S - 60)
    expect429(await login(b, victim, PASSWORD, attacker), LOCK_S)
    expect429(await login(b, victim, 'wrong-again', attacker), LOCK_S)
    // Every response but /health and /ready carries the RateLimit-* headers, a lock-out 429 too.
    expect(rl(locked).limit).toBeGreaterThan(0)
    // The victim, from their own address, is not locked out by a stranger.
    expect((await login(a, victim, PASSWORD, newIp())).status).toBe(200)
    expect((await login(b, victim, PASSWORD, newIp())).status).toBe(200)
    expect((await login(a, bystander, PASSWORD, attacker)).status).toBe(200)
    expect((await login(b, bystander, 'wrong', attacker)).status).toBe(401)
    expect((await login(b, bystander, PASSWORD, attacker)).status).toBe(200)
  })

  it('a stranger cannot lock the superadmin out', async () => {
    const stranger = newIp()
    await fail10(ADMIN.username, stranger)
    expect429(await login(a, ADMIN.username, ADMIN.password, stranger), LOCK_S)
    expect((await login(b, ADMIN.username, ADMIN.password, newIp())).status).toBe(200)
  })

  it('no username names another one\'s log: failures for "<user>:ip:<address>" do not lock <user> at that address', async () => {
    const victim = await newUsername()
    const victimIp = newIp()
    await fail10(`${victim}:ip:${victimIp}`, newIp())
    expect((await login(a, victim, PASSWORD, victimIp)).status).toBe(200)
  })

  it('any string is a username to count: a lone surrogate fails as 401 and locks like any other', async () => {
    const ip = newIp()
    for (const res of await fail10('agente\ud800', ip)) expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: BAD_LOGIN })
    expect429(await login(a, 'agente\ud800', PASSWORD, ip), LOCK_S)
    // Not the same log as the replacement character it would become in UTF-8.
    expect((await login(a, 'agente\ufffd', PASSWORD, ip)).status).toBe(401)
  })

  it('100 failures from any addresses lock the username for every client without a device value; successful logins are not failures', async () => {
    const user = await newUsername()
    for (let i = 0; i < 5; i++) expect((await login(i % 2 === 0 ? a : b, user, PASSWORD, newIp())).status).toBe(200)
    const statuses: number[] = []
    for (let ip = 0; ip < 10; ip++) statuses.push(...(await fail10(user, newIp())).map((r) => r.status))
    expect(statuses).toEqual(Array(100).fill(401))
    const locked = await login(a, user, PASSWORD, newIp())
    expect429(locked, LOCK_S)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(LOCK_S - 120)
    expect429(await login(b, user, PASSWORD, newIp()), LOCK_S)
  })

  it('an unknown username fails and locks exactly like a known one (no enumeration)', async () => {
    const known = await newUsername()
    const unknown = 'rl.nadie-existe'
    const ip = newIp()
    const k = await fail10(known, ip)
    const u = await fail10(unknown, ip)
    const view = (r: Res & { raw: string }): unknown => ({ status: r.status, raw: r.raw, ct: r.headers['content-type'] })
    expect(u.map(view)).toEqual(k.map(view))
    const kLocked = await login(a, known, PASSWORD, ip)
    const uLocked = await login(b, unknown, PASSWORD, ip)
    expect429(kLocked, LOCK_S)
    expect429(uLocked, LOCK_S)
    expect(view(uLocked)).toEqual(view(kLocked))
    expect(Object.keys(uLocked.headers).filter((n) => !['date', 'connection'].includes(n)).sort())
      .toEqual(Object.keys(kLocked.headers).filter((n) => !['date', 'connection'].includes(n)).sort())
  })

  it('parallel attempts from one address get no more than ten password checks: the rest are 429', async () => {
    const user = await newUsername()
    const ip = newIp()
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => login(i % 2 === 0 ? a : b, user, `wrong-${i}`, ip)))
    const statuses = all.map((r) => r.status)
    expect(statuses.every((s) => s === 401 || s === 429), String(statuses)).toBe(true)
    expect(statuses.filter((s) => s === 401).length, 'failed password checks').toBeLessThanOrEqual(10)
    expect429(await login(a, user, PASSWORD, ip), LOCK_S)
  })

  it('a successful login clears the failures of its own address, not those of another', async () => {
    const user = await newUsername()
    const ip = newIp()
    const nine = async (from: string): Promise<void> => {
      for (let i = 0; i < 9; i++) expect((await login(i % 2 === 0 ? a : b, user, 'wrong', from)).status).toBe(401)
    }
    await nine(ip)
    expect((await login(b, user, PASSWORD, ip)).status).toBe(200)
    await nine(ip)
    expect((await login(a, user, PASSWORD, ip)).status).toBe(200)
    await nine(ip)
    expect((await login(a, user, PASSWORD, newIp())).status).toBe(200) // another address: this one keeps its nine
    expect((await login(b, user, 'wrong', ip)).status).toBe(401)
    expect429(await login(a, user, PASSWORD, ip), LOCK_S)
  })
})
