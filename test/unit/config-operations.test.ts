/**
 * The operator side of the environment (docs/operator-guide.md "Configuration"): production guards,
 * CORS_ORIGINS, METRICS_PORT and STARTUP_WAIT. Every refusal is a
 * ConfigError that names the variable and says how to fix it.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../core/config.js'
import { ConfigError } from '../../core/errors.js'

const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'policia-config-ops-')); dirs.push(d); return d }
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

const SECRETS = { JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }
const PG = 'postgres://policia:pw@db:5432/policia'

function refusal (env: Record<string, string>): string {
  try { loadConfig({ DATA_DIR: tmp(), ...env }) } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('loadConfig accepted it')
}

describe('production guards', () => {
  it('NODE_ENV=production without DATABASE_URL refuses to start, naming the variable and its form', () => {
    expect(refusal({ NODE_ENV: 'production', ...SECRETS })).toMatch(/^NODE_ENV=production needs DATABASE_URL \(postgres:\/\/.*embedded database is for development only/)
    expect(loadConfig({ DATA_DIR: tmp(), NODE_ENV: 'production', ...SECRETS, DATABASE_URL: PG }).databaseUrl).toBe(PG)
  })

  it.each([
    ['DATABASE_URL', { DATABASE_URL: PG }],
    ['REDIS_URL', { REDIS_URL: 'redis://redis:6379' }],
    ['DATABASE_URL and REDIS_URL', { DATABASE_URL: PG, REDIS_URL: 'redis://redis:6379' }],
  ])('with %s set, generated development secrets are refused, even when DATA_DIR/secrets.json exists', (names, shared) => {
    const DATA_DIR = tmp()
    loadConfig({ DATA_DIR }) // a development start generated DATA_DIR/secrets.json
    expect(existsSync(join(DATA_DIR, 'secrets.json'))).toBe(true)
    let message = ''
    try { loadConfig({ DATA_DIR, ...shared }) } catch (err) { message = (err as Error).message }
    expect(message).toContain(`${names} ${names.includes(' and ') ? 'are' : 'is'} set, so JWT_SECRET and ENCRYPTION_KEY must be set too`)
    expect(message).toContain('randomBytes(48)') // the fix
    expect(message).toContain(join(DATA_DIR, 'secrets.json'))
    expect(() => loadConfig({ DATA_DIR, ...shared, JWT_SECRET: SECRETS.JWT_SECRET })).toThrow(/must be set too.*ENCRYPTION_KEY/)
    expect(loadConfig({ DATA_DIR, ...shared, ...SECRETS }).jwtSecret).toBe(SECRETS.JWT_SECRET)
  })

  it('never writes secrets.json when it refuses', () => {
    const DATA_DIR = tmp()
    expect(() => loadConfig({ DATA_DIR, DATABASE_URL: PG })).toThrow(ConfigError)
    expect(existsSync(join(DATA_DIR, 'secrets.json'))).toBe(false)
  })

  it('without shared services and outside production the development secrets still work', () => {
    const DATA_DIR = tmp()
    writeFileSync(join(DATA_DIR, 'secrets.json'), JSON.stringify({ jwtSecret: 's'.repeat(48), encryptionKey: SECRETS.ENCRYPTION_KEY }))
    expect(loadConfig({ DATA_DIR }).jwtSecret).toBe('s'.repeat(48))
  })
})

describe('CORS_ORIGINS', () => {
  const origins = (value: string): readonly string[] => loadConfig({ DATA_DIR: tmp(), ...SECRETS, CORS_ORIGINS: value }).corsOrigins

  it('defaults to none and reads a comma-separated list of origins', () => {
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS }).corsOrigins).toEqual([])
    expect(origins('')).toEqual([])
    expect(origins('https://intranet.policia.example, http://localhost:5173,https://intranet.policia.example')).toEqual(['https://intranet.policia.example', 'http://localhost:5173'])
    expect(origins('http://[::1]:8080')).toEqual(['http://[::1]:8080'])
  })

  it.each([
    ['*', /"\*" is not one$/],
    ['https://intranet.policia.example/', /did you mean https:\/\/intranet\.policia\.example\?/],
    ['https://intranet.policia.example/app', /did you mean https:\/\/intranet\.policia\.example\?/],
    ['intranet.policia.example', /is not one/],
    ['ftp://files.example', /is not one/],
    ['https://user:pw@intranet.example', /is not one/],
    ['HTTPS://Intranet.Example', /did you mean https:\/\/intranet\.example\?/],
  ])('refuses %j, naming the variable and the accepted form', (value, why) => {
    const message = refusal({ ...SECRETS, CORS_ORIGINS: value })
    expect(message).toMatch(/^CORS_ORIGINS must be a comma-separated list of origins such as https:\/\/intranet\.policia\.example/)
    expect(message).toMatch(why)
  })
})

describe('METRICS_PORT and STARTUP_WAIT', () => {
  it('METRICS_PORT defaults to 9464, 0 turns it off, anything else but a port is refused', () => {
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS }).metricsPort).toBe(9464)
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS, METRICS_PORT: '0' }).metricsPort).toBe(0)
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS, METRICS_PORT: '9100' }).metricsPort).toBe(9100)
    expect(refusal({ ...SECRETS, METRICS_PORT: 'off' })).toMatch(/^METRICS_PORT must be a whole number/)
    expect(refusal({ ...SECRETS, METRICS_PORT: '70000' })).toMatch(/^METRICS_PORT must be a whole number .* ≤ 65535/)
  })

  it('STARTUP_WAIT defaults to waiting for ever (0) and takes a duration', () => {
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS }).startupWaitMs).toBe(0)
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS, STARTUP_WAIT: '0' }).startupWaitMs).toBe(0)
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS, STARTUP_WAIT: '5m' }).startupWaitMs).toBe(300_000)
    expect(refusal({ ...SECRETS, STARTUP_WAIT: 'soon' })).toMatch(/^STARTUP_WAIT must be a duration/)
  })

  it('SLOW_LIST defaults to 200 ms and takes a duration (docs/administrator-guide.md "Indexes")', () => {
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS }).slowListMs).toBe(200)
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS, SLOW_LIST: '1s' }).slowListMs).toBe(1000)
    expect(refusal({ ...SECRETS, SLOW_LIST: 'slow' })).toMatch(/^SLOW_LIST must be a duration/)
  })
})

describe('KEEP_ALIVE_TIMEOUT', () => {
  it('is 75 s by default (above nginx\'s 60 s idle upstream timeout), takes a duration, and refuses anything else naming the variable', () => {
    expect(loadConfig({ DATA_DIR: tmp() }).keepAliveTimeoutMs).toBe(75_000)
    expect(loadConfig({ DATA_DIR: tmp(), KEEP_ALIVE_TIMEOUT: '2m' }).keepAliveTimeoutMs).toBe(120_000)
    expect(loadConfig({ DATA_DIR: tmp(), KEEP_ALIVE_TIMEOUT: '90' }).keepAliveTimeoutMs).toBe(90_000)
    expect(refusal({ KEEP_ALIVE_TIMEOUT: 'largo' })).toMatch(/^KEEP_ALIVE_TIMEOUT must be a duration such as 60, 60s, 15m or 1h/)
    expect(refusal({ KEEP_ALIVE_TIMEOUT: '0' })).toMatch(/^KEEP_ALIVE_TIMEOUT must be a duration/)
    expect(refusal({ KEEP_ALIVE_TIMEOUT: '2h' })).toMatch(/^KEEP_ALIVE_TIMEOUT must be at most 3600s/)
  })
})

describe('IDEMPOTENCY_TTL and IDEMPOTENCY_LEASE (docs/operator-guide.md "Idempotency keys")', () => {
  it('default to 24 h and 30 s, take durations, and refuse a lease over 10 minutes', () => {
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS }).idempotency).toEqual({ ttlMs: 86_400_000, leaseMs: 30_000 })
    expect(loadConfig({ DATA_DIR: tmp(), ...SECRETS, IDEMPOTENCY_TTL: '90m', IDEMPOTENCY_LEASE: '5s' }).idempotency).toEqual({ ttlMs: 5_400_000, leaseMs: 5_000 })
    expect(refusal({ ...SECRETS, IDEMPOTENCY_TTL: 'un día' })).toMatch(/^IDEMPOTENCY_TTL must be a duration/)
    expect(refusal({ ...SECRETS, IDEMPOTENCY_LEASE: '11m' })).toMatch(/^IDEMPOTENCY_LEASE must be at most 600s/)
  })
})
