/**
 * TRUST_PROXY and RATE_LIMIT_IP_EXEMPT (docs/operator-guide.md "Client address and TRUST_PROXY"): every documented
 * form is read as meant, every address list the configuration accepts is
 * one Fastify's trustProxy (proxy-addr) accepts too, and anything else stops
 * the start with a ConfigError that names the variable, the accepted forms
 * and an example. Also HSTS and the /docs and /ready window.
 */
import { describe, expect, it } from 'vitest'
import Fastify from 'fastify'
import { loadConfig } from '../../core/config.js'
import { ConfigError } from '../../core/errors.js'
import { trustProxyOption } from '../../http/trust-proxy.js'

const base = { JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }
const load = (env: Record<string, string>): ReturnType<typeof loadConfig> => loadConfig({ ...base, ...env })
const trustProxy = (value: string | undefined): unknown => load(value !== undefined ? { TRUST_PROXY: value } : {}).trustProxy

function refusal (env: Record<string, string>): string {
  let err: unknown
  try { load(env) } catch (e) { err = e }
  expect(err).toBeInstanceOf(ConfigError)
  return (err as Error).message
}

const LISTS = ['10.0.0.0/8, 127.0.0.1', '10.0.0.0/8,172.16.0.0/12,127.0.0.1,::1', '::1,fd00::/8,loopback,192.168.0.0/255.255.0.0', 'linklocal,uniquelocal', '::ffff:10.0.0.1', '2001:db8::/32']
const BAD = ['abc', '10.0.0.0/33', '-1', '1.5', '10.0.0.1,', 'fd00::/129', '10.0.0.0/8/1', 'yes', '10.0.0.0/0', '::/0', '10.0.0.0/255.0.255.0', 'fd00::/255.0.0.0', '10.1', 'fe80::1%eth0', '10.0.0.0/']

describe('TRUST_PROXY', () => {
  it('reads false, true, a hop count and addresses/CIDRs', () => {
    expect(trustProxy(undefined)).toBe(false)
    expect(trustProxy('')).toBe(false)
    expect(trustProxy('false')).toBe(false)
    expect(trustProxy('0')).toBe(false)
    expect(trustProxy('true')).toBe(true)
    expect(trustProxy('1')).toBe(1)
    expect(trustProxy('2')).toBe(2)
    expect(trustProxy('10.0.0.0/8, 127.0.0.1')).toEqual(['10.0.0.0/8', '127.0.0.1'])
    expect(trustProxy('10.0.0.0/8,172.16.0.0/12,127.0.0.1,::1')).toEqual(['10.0.0.0/8', '172.16.0.0/12', '127.0.0.1', '::1'])
    expect(trustProxy('::1,fd00::/8,loopback,192.168.0.0/255.255.0.0')).toEqual(['::1', 'fd00::/8', 'loopback', '192.168.0.0/255.255.0.0'])
  })

  it.each(LISTS)('%j is accepted by Fastify too, and trusts exactly the listed peers', async (value) => {
    const app = Fastify({ trustProxy: trustProxyOption(load({ TRUST_PROXY: value }).trustProxy) })
    app.get('/', async (request) => request.ip)
    const ip = async (peer: string): Promise<string> => (await app.inject({ url: '/', remoteAddress: peer, headers: { 'x-forwarded-for': '203.0.113.7' } })).body
    const first = value.split(',')[0]!.trim()
    const inside = { '10.0.0.0/8': '10.1.2.3', '::1': '::1', linklocal: '169.254.1.1', '::ffff:10.0.0.1': '10.0.0.1', '2001:db8::/32': '2001:db8::5' }[first] ?? '10.1.2.3'
    expect(await ip(inside)).toBe('203.0.113.7')
    expect(await ip('198.51.100.1')).toBe('198.51.100.1')
    await app.close()
  })

  it.each(BAD)('refuses %j naming the variable, the forms and an example', (value) => {
    const message = refusal({ TRUST_PROXY: value })
    expect(message).toMatch(/^TRUST_PROXY must be true, false, a hop count .*forgeable.* or a comma-separated list of addresses and CIDR ranges/)
    expect(message).toContain(`(got "${value}")`)
    expect(message).toContain('TRUST_PROXY=10.0.0.0/8,127.0.0.1')
  })
})

describe('RATE_LIMIT_IP_EXEMPT', () => {
  const exempt = (value: string | undefined): ReturnType<typeof loadConfig>['rateLimit']['ipExempt'] => load(value !== undefined ? { RATE_LIMIT_IP_EXEMPT: value } : {}).rateLimit.ipExempt

  it('none by default', () => {
    for (const v of [undefined, '', '  ']) {
      expect(exempt(v).entries).toEqual([])
      expect(exempt(v).includes('127.0.0.1')).toBe(false)
    }
  })

  it('matches addresses and CIDR ranges, IPv4 (also IPv4-mapped) and IPv6', () => {
    const list = exempt('192.0.2.10, 198.51.100.0/24,fd00:88::/32,10.0.0.0/255.0.0.0')
    expect(list.entries).toEqual(['192.0.2.10', '198.51.100.0/24', 'fd00:88::/32', '10.0.0.0/255.0.0.0'])
    for (const ip of ['192.0.2.10', '198.51.100.0', '198.51.100.255', '::ffff:198.51.100.7', 'fd00:88::1', 'fd00:88:ffff::1', '10.200.0.1']) expect(list.includes(ip), ip).toBe(true)
    for (const ip of ['192.0.2.11', '198.51.101.1', 'fd00:89::1', '11.0.0.1', '::1', 'not-an-address', '']) expect(list.includes(ip), ip).toBe(false)
    expect(exempt('loopback').includes('127.0.0.9')).toBe(true)
    expect(exempt('loopback').includes('::1')).toBe(true)
  })

  it.each(BAD.filter((v) => v !== '-1' && v !== '1.5'))('refuses %j naming the variable and an example', (value) => {
    const message = refusal({ RATE_LIMIT_IP_EXEMPT: value })
    expect(message).toMatch(/^RATE_LIMIT_IP_EXEMPT must be a comma-separated list of addresses and CIDR ranges/)
    expect(message).toContain(`(got "${value}")`)
    expect(message).toContain('RATE_LIMIT_IP_EXEMPT=192.0.2.10,198.51.100.0/24')
  })

  it('a hop count or true is no list of addresses', () => {
    for (const v of ['1', 'true']) expect(refusal({ RATE_LIMIT_IP_EXEMPT: v })).toMatch(/^RATE_LIMIT_IP_EXEMPT must be/)
  })
})

describe('HSTS and the /docs and /ready window', () => {
  it('HSTS is off unless true; anything else but true/false refuses to start', () => {
    expect(load({}).hsts).toBe(false)
    expect(load({ HSTS: 'false' }).hsts).toBe(false)
    expect(load({ HSTS: 'true' }).hsts).toBe(true)
    for (const v of ['yes', '1', 'TRUE ish']) expect(refusal({ HSTS: v })).toBe(`HSTS must be true or false (got "${v}")`)
  })

  it('RATE_LIMIT_DOCS_MAX and RATE_LIMIT_DOCS_WINDOW: 60 a minute by default', () => {
    expect(load({}).rateLimit).toMatchObject({ docsMax: 60, docsWindowMs: 60_000 })
    expect(load({ RATE_LIMIT_DOCS_MAX: '5', RATE_LIMIT_DOCS_WINDOW: '10s' }).rateLimit).toMatchObject({ docsMax: 5, docsWindowMs: 10_000 })
    expect(refusal({ RATE_LIMIT_DOCS_MAX: 'lots' })).toMatch(/^RATE_LIMIT_DOCS_MAX must be a whole number/)
    expect(refusal({ RATE_LIMIT_DOCS_WINDOW: '0' })).toMatch(/^RATE_LIMIT_DOCS_WINDOW must be a duration/)
  })
})
