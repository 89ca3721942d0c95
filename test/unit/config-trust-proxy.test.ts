/**
 * TRUST_PROXY (SPEC S10, S15): every documented form is read as meant, and
 * anything else stops the start with a ConfigError that names the variable
 * and the accepted forms.
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../core/config.js'
import { ConfigError } from '../../core/errors.js'

const base = { JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }
const trustProxy = (value: string | undefined): unknown => loadConfig({ ...base, ...(value !== undefined && { TRUST_PROXY: value }) }).trustProxy

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
    expect(trustProxy('::1,fd00::/8,loopback,192.168.0.0/255.255.0.0')).toEqual(['::1', 'fd00::/8', 'loopback', '192.168.0.0/255.255.0.0'])
  })

  it.each(['abc', '10.0.0.0/33', '-1', '1.5', '10.0.0.1,', 'fd00::/129', '10.0.0.0/8/1', 'yes'])('refuses %j naming the variable and the forms', (value) => {
    let err: unknown
    try { trustProxy(value) } catch (e) { err = e }
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as Error).message).toMatch(/^TRUST_PROXY must be true, false, a hop count .* or a comma-separated list of proxy addresses and CIDRs/)
    expect((err as Error).message).toContain(`(got "${value}")`)
  })
})
