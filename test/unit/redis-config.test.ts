/**
 * REDIS_URL or REDIS_SENTINELS (docs/operator-guide.md "Configuration",
 * "High availability"): what the start accepts, and every refusal naming
 * the variable and its fix.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../core/config.js'
import { ConfigError } from '../../core/errors.js'
import { describeRedis, redisTarget } from '../../core/redis-config.js'

const dirs: string[] = []
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

function refusal (env: Record<string, string>): string {
  try { redisTarget(env) } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('redisTarget accepted it')
}

describe('the shared Redis', () => {
  it('none, one by URL, or the primary of a Sentinel group, with both passwords kept out of descriptions', () => {
    expect(redisTarget({})).toBeUndefined()
    expect(redisTarget({ REDIS_URL: 'redis://:secreto@cache:6379' })).toEqual({ kind: 'url', url: 'redis://:secreto@cache:6379' })
    const target = redisTarget({ REDIS_SENTINELS: ' s1:26379, 10.0.0.2:26380,[2001:db8::1]:26379 ', REDIS_SENTINEL_NAME: 'policia', REDIS_SENTINEL_PASSWORD: 'sp', REDIS_PASSWORD: 'rp' })
    expect(target).toEqual({
      kind: 'sentinel',
      sentinels: [{ host: 's1', port: 26379 }, { host: '10.0.0.2', port: 26380 }, { host: '2001:db8::1', port: 26379 }],
      name: 'policia',
      sentinelPassword: 'sp',
      password: 'rp',
    })
    expect(describeRedis(target!)).toBe('the Redis primary of "policia" (Sentinels s1:26379, 10.0.0.2:26380, [2001:db8::1]:26379)')
    expect(describeRedis(redisTarget({ REDIS_URL: 'redis://:secreto@cache:6379' })!)).not.toContain('secreto')
  })

  it('refuses what cannot be meant, saying what to set', () => {
    expect(refusal({ REDIS_URL: 'redis://cache:6379', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'p' })).toMatch(/^REDIS_URL and REDIS_SENTINELS are both set: .*unset REDIS_URL/)
    expect(refusal({ REDIS_SENTINELS: 's1:26379' })).toMatch(/^REDIS_SENTINELS is set but REDIS_SENTINEL_NAME is not: .*sentinel monitor <name>/)
    expect(refusal({ REDIS_SENTINELS: 's1', REDIS_SENTINEL_NAME: 'p' })).toMatch(/^REDIS_SENTINELS must be a comma-separated list of host:port .*"s1" is not one/)
    expect(refusal({ REDIS_SENTINELS: 's1:70000', REDIS_SENTINEL_NAME: 'p' })).toMatch(/"s1:70000" is not one/)
    expect(refusal({ REDIS_SENTINEL_NAME: 'p' })).toMatch(/^REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not/)
    expect(refusal({ REDIS_URL: 'redis://cache:6379', REDIS_PASSWORD: 'x' })).toMatch(/^REDIS_PASSWORD is for the Redis servers behind REDIS_SENTINELS; with REDIS_URL put the password in the URL/)
  })

  it('Sentinels are shared services: the generated development secrets are refused with them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policia-redis-config-'))
    dirs.push(dir)
    expect(() => loadConfig({ DATA_DIR: dir, REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'p' })).toThrow(/^REDIS_SENTINELS is set, so JWT_SECRET and ENCRYPTION_KEY must be set too/)
  })
})
