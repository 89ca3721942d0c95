/**
 * The pure building blocks: service-time-zone dates (docs/user-guide.md "API"), field
 * encryption and blind indexes (canonical JSON: canonical.test.ts) and the
 * environment contract (core/config.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { formatDateTime, isoText, isValidDate, isValidTime, parseDateTime, today, yearIn } from '../../core/time.js'
import { createFieldCipher, fieldIndexKey, normaliseSearchable } from '../../core/crypto.js'
import { keyId, loadConfig } from '../../core/config.js'
import { ConfigError } from '../../core/errors.js'

const TZ = 'Europe/Madrid'
const iso = (text: string): string | undefined => parseDateTime(text, TZ)?.toISOString()

describe('core/time.ts in Europe/Madrid', () => {
  it('reads ISO 8601 with Z or an offset as that instant', () => {
    expect(iso('2026-06-01T10:00:00Z')).toBe('2026-06-01T10:00:00.000Z')
    expect(iso('2026-06-01T10:00:00+05:30')).toBe('2026-06-01T04:30:00.000Z')
    expect(iso('2026-01-15T08:00:00-03:00')).toBe('2026-01-15T11:00:00.000Z')
    expect(iso('2026-06-01T10:00Z')).toBe('2026-06-01T10:00:00.000Z')
    expect(iso('2026-06-01T10:00:00.999Z')).toBe('2026-06-01T10:00:00.000Z') // whole seconds
  })

  it('shows instants as YYYY-MM-DD HH:MM:SS in the zone (summer +2, winter +1)', () => {
    expect(formatDateTime(new Date('2026-06-01T10:00:00Z'), TZ)).toBe('2026-06-01 12:00:00')
    expect(formatDateTime(new Date('2026-01-15T10:00:00Z'), TZ)).toBe('2026-01-15 11:00:00')
    expect(formatDateTime(new Date('2026-01-15T23:05:09Z'), TZ)).toBe('2026-01-16 00:05:09')
    expect(formatDateTime(new Date('2026-06-01T10:00:00Z'), 'UTC')).toBe('2026-06-01 10:00:00')
  })

  it('reads the local form in the zone and round-trips it', () => {
    expect(iso('2026-06-01 12:00:00')).toBe('2026-06-01T10:00:00.000Z')
    expect(iso('2026-01-15 11:00:00')).toBe('2026-01-15T10:00:00.000Z')
    for (const local of ['2026-03-15 10:30:00', '2026-07-31 23:59:59', '2026-12-31 00:00:00', '2028-02-29 12:00:00']) {
      expect(formatDateTime(parseDateTime(local, TZ)!, TZ)).toBe(local)
    }
  })

  it('rejects a local time in the spring DST gap (2026-03-29 02:00–02:59)', () => {
    expect(parseDateTime('2026-03-29 02:00:00', TZ)).toBeNull()
    expect(parseDateTime('2026-03-29 02:30:00', TZ)).toBeNull()
    expect(parseDateTime('2026-03-29 02:59:59', TZ)).toBeNull()
    expect(iso('2026-03-29 01:59:59')).toBe('2026-03-29T00:59:59.000Z')
    expect(iso('2026-03-29 03:00:00')).toBe('2026-03-29T01:00:00.000Z')
  })

  it('takes the earlier instant for a local time in the autumn fold (2026-10-25 02:00–02:59)', () => {
    expect(iso('2026-10-25 02:30:00')).toBe('2026-10-25T00:30:00.000Z')
    expect(iso('2026-10-25 02:00:00')).toBe('2026-10-25T00:00:00.000Z')
    expect(iso('2026-10-25 03:00:00')).toBe('2026-10-25T02:00:00.000Z')
    expect(formatDateTime(new Date('2026-10-25T01:30:00Z'), TZ)).toBe('2026-10-25 02:30:00')
  })

  it('rejects impossible dates and times and malformed text', () => {
    for (const bad of [
      '2026-02-29 10:00:00', '2026-04-31 10:00:00', '2026-13-01 10:00:00', '2026-00-10 10:00:00', '2026-01-00 10:00:00',
      '2026-01-01 24:00:00', '2026-01-01 10:60:00', '2026-01-01 10:00:60', '2026-02-30T10:00:00Z', '2026-01-01T25:00:00Z',
      '2026-01-01T10:00:00+24:00', '2026-01-01T10:00:00', '2026-01-01', '01/02/2026 10:00:00', '2026-1-1 10:00:00', '', 'mañana',
    ]) expect(parseDateTime(bad, TZ), bad).toBeNull()
  })

  it('knows leap years', () => {
    expect(iso('2028-02-29 12:00:00')).toBe('2028-02-29T11:00:00.000Z')
    expect(parseDateTime('2100-02-29 12:00:00', TZ)).toBeNull()
    expect(isValidDate('2000-02-29')).toBe(true)
    expect(isValidDate('2028-02-29')).toBe(true)
    expect(isValidDate('2026-02-29')).toBe(false)
    expect(isValidDate('1900-02-29')).toBe(false)
  })

  it('isValidDate / isValidTime', () => {
    for (const ok of ['2026-01-01', '2026-12-31', '2026-04-30']) expect(isValidDate(ok), ok).toBe(true)
    for (const bad of ['2026-04-31', '2026-13-01', '2026-1-01', '2026-01-01 ', '20260101', '2026-01-01T00:00:00Z', '']) expect(isValidDate(bad), bad).toBe(false)
    for (const ok of ['00:00', '08:30', '23:59']) expect(isValidTime(ok), ok).toBe(true)
    for (const bad of ['24:00', '12:60', '8:30', '08:30:00', '0830', '']) expect(isValidTime(bad), bad).toBe(false)
  })

  it('yearIn and today use the zone around New Year\'s Eve', () => {
    const eve = new Date('2026-12-31T23:30:00Z')
    expect(yearIn(eve, TZ)).toBe(2027)
    expect(yearIn(eve, 'UTC')).toBe(2026)
    expect(today(eve, TZ)).toBe('2027-01-01')
    expect(yearIn(new Date('2026-12-31T22:59:59Z'), TZ)).toBe(2026)
    expect(yearIn(new Date('2026-12-31T23:00:00Z'), TZ)).toBe(2027)
  })
})

describe('core/time.ts year bounds (years 1000-9999)', () => {
  it('refuses instants outside the years 1000-9999 as written, in UTC or in the service zone', () => {
    expect(parseDateTime('9999-12-31T23:59:59-23:59', 'Europe/Madrid')).toBeNull() // year 10000 in UTC
    expect(parseDateTime('1000-01-01T00:00:00+23:59', 'Europe/Madrid')).toBeNull() // year 999 in UTC
    expect(parseDateTime('1000-01-01T00:00:00Z', 'Europe/Madrid')).toBeNull() // 0999-12-31 23:45:16 in Madrid (local mean time)
    expect(parseDateTime('1000-01-01 00:30:00', 'Asia/Tokyo')).toBeNull() // east of UTC: still year 999 in UTC
    expect(parseDateTime('9999-12-31 23:30:00', 'America/New_York')).toBeNull() // year 10000 in UTC
    for (const bad of ['0001-01-01T00:00:00Z', '0001-01-01 00:00:00', '0999-12-31 23:59:59', '0999-12-31T23:59:59Z', '0000-01-01T00:00:00Z', '0050-06-01 10:00:00']) {
      expect(parseDateTime(bad, 'UTC'), bad).toBeNull()
      expect(parseDateTime(bad, 'Europe/Madrid'), bad).toBeNull()
    }
  })

  it('accepts the first and last second of the range, which read back as written', () => {
    expect(parseDateTime('9999-12-31 23:00:00', 'Europe/Madrid')?.toISOString()).toBe('9999-12-31T22:00:00.000Z')
    expect(parseDateTime('9999-12-31T23:59:59Z', 'UTC')?.toISOString()).toBe('9999-12-31T23:59:59.000Z')
    expect(parseDateTime('1000-01-01T00:00:00Z', 'UTC')?.toISOString()).toBe('1000-01-01T00:00:00.000Z')
    for (const local of ['1000-01-01 00:00:00', '1000-06-01 10:00:00', '9999-12-31 23:59:59']) {
      expect(formatDateTime(parseDateTime(local, 'Europe/Madrid')!, 'Europe/Madrid'), local).toBe(local)
    }
  })

  it('dates: only the years 1000-9999', () => {
    for (const ok of ['1000-01-01', '9999-12-31', '1004-02-29']) expect(isValidDate(ok), ok).toBe(true)
    for (const bad of ['0999-12-31', '0001-01-01', '0004-02-29', '0000-01-01', '1100-02-29']) expect(isValidDate(bad), bad).toBe(false)
  })
})

describe('core/crypto.ts', () => {
  const k1 = randomBytes(32)
  const k2 = randomBytes(32)
  const mac = { indexKey: randomBytes(32), integrityKey: randomBytes(32) }
  const cipher = createFieldCipher([k1], mac)

  it('encrypts and decrypts a value bound to its record and field', () => {
    const stored = cipher.encrypt('12345678Z', 'DEN-2026-00001', 'denunciante_dni')
    expect(stored.startsWith(`v1:${keyId(k1)}:`)).toBe(true)
    expect(stored).not.toContain('12345678Z')
    expect(cipher.decrypt(stored, 'DEN-2026-00001', 'denunciante_dni')).toBe('12345678Z')
    const unicode = 'Calle Ñandú 3, 2º — 😀'
    expect(cipher.decrypt(cipher.encrypt(unicode, 'X', 'f'), 'X', 'f')).toBe(unicode)
    expect(cipher.decrypt(cipher.encrypt('', 'X', 'f'), 'X', 'f')).toBe('')
  })

  it('uses a fresh IV: the same value encrypts differently each time', () => {
    const a = cipher.encrypt('12345678Z', 'DEN-2026-00001', 'denunciante_dni')
    const b = cipher.encrypt('12345678Z', 'DEN-2026-00001', 'denunciante_dni')
    expect(a).not.toBe(b)
    expect(a.split(':')[2]).not.toBe(b.split(':')[2])
    expect(Buffer.from(a.split(':')[2]!, 'base64')).toHaveLength(12)
  })

  it('binds record id and field as AAD: another id or field fails, so does tampering', () => {
    const stored = cipher.encrypt('600111222', 'DEN-2026-00001', 'denunciante_telefono')
    expect(() => cipher.decrypt(stored, 'DEN-2026-00002', 'denunciante_telefono')).toThrow()
    expect(() => cipher.decrypt(stored, 'DEN-2026-00001', 'denunciante_dni')).toThrow()
    const parts = stored.split(':')
    const ct = Buffer.from(parts[3]!, 'base64')
    ct[0]! ^= 1
    expect(() => cipher.decrypt([...parts.slice(0, 3), ct.toString('base64')].join(':'), 'DEN-2026-00001', 'denunciante_telefono')).toThrow()
    expect(() => cipher.decrypt('not-a-ciphertext', 'DEN-2026-00001', 'denunciante_telefono')).toThrow()
  })

  it('rotates keys: old values decrypt with [new, old], not with [new] alone', () => {
    const old = createFieldCipher([k1], mac).encrypt('secreto', 'PER-2026-00001', 'nif')
    const rotated = createFieldCipher([k2, k1], mac)
    expect(rotated.decrypt(old, 'PER-2026-00001', 'nif')).toBe('secreto')
    const fresh = rotated.encrypt('nuevo', 'PER-2026-00001', 'nif')
    expect(fresh.startsWith(`v1:${keyId(k2)}:`)).toBe(true)
    expect(() => createFieldCipher([k2], mac).decrypt(old, 'PER-2026-00001', 'nif')).toThrow()
    expect(createFieldCipher([k2], mac).decrypt(fresh, 'PER-2026-00001', 'nif')).toBe('nuevo')
    expect(() => createFieldCipher([], mac)).toThrow()
  })

  it('blind index: trimmed and upper-cased, deterministic, not the plaintext', () => {
    expect(normaliseSearchable('  12345678z \n')).toBe('12345678Z')
    const idx = cipher.blindIndex('personal', 'nif', '12345678Z')
    expect(idx).toMatch(/^[0-9a-f]{64}$/)
    expect(cipher.blindIndex('personal', 'nif', ' 12345678z ')).toBe(idx)
    expect(cipher.blindIndex('personal', 'nif', '12345678Y')).not.toBe(idx)
    expect(idx).not.toContain('12345678')
    expect(idx).not.toBe(Buffer.from('12345678Z').toString('hex'))
    // Another index key gives another index; blind index and digest use different keys.
    expect(createFieldCipher([k1], { ...mac, indexKey: randomBytes(32) }).blindIndex('personal', 'nif', '12345678Z')).not.toBe(idx)
    expect(cipher.digest('12345678Z')).not.toBe(idx)
    // Neither depends on the encryption key: rotating it changes no index or digest.
    expect(createFieldCipher([k2, k1], mac).blindIndex('personal', 'nif', 'A')).toBe(createFieldCipher([k1], mac).blindIndex('personal', 'nif', 'a'))
    expect(createFieldCipher([k2, k1], mac).digest('A')).toBe(cipher.digest('A'))
  })

  it('blind index: one key per module and field, HKDF-SHA-256 of the index key with info "indice-ciego:<module>.<field>"', () => {
    const dni = '12345678Z'
    const a = cipher.blindIndex('denuncias', 'denunciante_dni', dni)
    const b = cipher.blindIndex('sanciones', 'infractor_dni', dni)
    const c = cipher.blindIndex('denuncias', 'infractor_dni', dni)
    expect(new Set([a, b, c]).size).toBe(3)
    // Neither is the single-key index of before.
    const old = createHmac('sha256', mac.indexKey).update(dni).digest('hex')
    expect([a, b, c]).not.toContain(old)
    // Exactly as docs/user-guide.md "Encryption" documents it, with Node's HKDF and HMAC alone.
    const fieldKey = Buffer.from(hkdfSync('sha256', mac.indexKey, Buffer.alloc(0), Buffer.from('indice-ciego:denuncias.denunciante_dni', 'utf8'), 32))
    expect(fieldIndexKey(mac.indexKey, 'denuncias', 'denunciante_dni')).toEqual(fieldKey)
    expect(createHmac('sha256', fieldKey).update(dni, 'utf8').digest('hex')).toBe(a)
  })
})

describe('core/config.ts', () => {
  const dirs: string[] = []
  const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'policia-config-')); dirs.push(d); return d }
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })
  const KEY = randomBytes(32).toString('base64')
  const SECRET = 'x'.repeat(40)

  it('NODE_ENV=production without JWT_SECRET or ENCRYPTION_KEY refuses to start', () => {
    const DATA_DIR = tmp()
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR })).toThrow(ConfigError)
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR, ENCRYPTION_KEY: KEY })).toThrow(/JWT_SECRET/)
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR, JWT_SECRET: SECRET })).toThrow(/ENCRYPTION_KEY/)
    expect(existsSync(join(DATA_DIR, 'secrets.json'))).toBe(false)
    const ok = loadConfig({ NODE_ENV: 'production', DATA_DIR, JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, DATABASE_URL: 'postgres://db/policia' })
    expect(ok.production).toBe(true)
    expect(ok.encryptionKeys[0]!.equals(Buffer.from(KEY, 'base64'))).toBe(true)
  })

  it('an ENCRYPTION_KEY that is not 32 bytes is refused', () => {
    const DATA_DIR = tmp()
    for (const bad of [randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'short']) {
      expect(() => loadConfig({ DATA_DIR, JWT_SECRET: SECRET, ENCRYPTION_KEY: bad })).toThrow(ConfigError)
    }
    expect(() => loadConfig({ DATA_DIR, JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, ENCRYPTION_KEYS: 'abcd' })).toThrow(/ENCRYPTION_KEYS/)
    expect(() => loadConfig({ DATA_DIR, JWT_SECRET: 'too-short', ENCRYPTION_KEY: KEY })).toThrow(ConfigError)
  })

  it('keeps old keys for reading after the current one', () => {
    const old = randomBytes(32).toString('base64')
    const c = loadConfig({ DATA_DIR: tmp(), JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY, ENCRYPTION_KEYS: `${old}, ${KEY}` })
    expect(c.encryptionKeys.map((k) => k.toString('base64'))).toEqual([KEY, old])
    expect(Object.isFrozen(c)).toBe(true)
  })

  it('development without secrets generates them once in DATA_DIR/secrets.json and reuses them', () => {
    const DATA_DIR = join(tmp(), 'nested')
    const first = loadConfig({ DATA_DIR })
    const file = join(DATA_DIR, 'secrets.json')
    expect(existsSync(file)).toBe(true)
    const stored = readFileSync(file, 'utf8')
    expect(first.production).toBe(false)
    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32)
    expect(first.encryptionKeys[0]).toHaveLength(32)
    const second = loadConfig({ DATA_DIR })
    expect(second.jwtSecret).toBe(first.jwtSecret)
    expect(second.encryptionKeys[0]!.equals(first.encryptionKeys[0]!)).toBe(true)
    expect(readFileSync(file, 'utf8')).toBe(stored)
    const other = loadConfig({ DATA_DIR: tmp() })
    expect(other.jwtSecret).not.toBe(first.jwtSecret)
  })

  it('rejects an unknown time zone and bad numbers', () => {
    const base = { DATA_DIR: tmp(), JWT_SECRET: SECRET, ENCRYPTION_KEY: KEY }
    expect(loadConfig(base).timeZone).toBe('Europe/Madrid')
    expect(() => loadConfig({ ...base, TZ: 'Europe/Madird' })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, RATE_LIMIT_IP_MAX: 'many' })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, RATE_LIMIT_IP_WINDOW: '0' })).toThrow(ConfigError)
    expect(loadConfig({ ...base, RATE_LIMIT_IP_WINDOW: '15m' }).rateLimit.ipWindowMs).toBe(900_000)
  })
})

describe('formatDateTime agrees with Intl for every instant (quarter-hour offset cache)', () => {
  const reference = (ms: number, timeZone: string): string => {
    const p = Object.fromEntries(new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(ms).filter((x) => x.type !== 'literal').map((x) => [x.type, x.value]))
    return `${p.year!.padStart(4, '0')}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`
  }
  const zones = ['Europe/Madrid', 'Atlantic/Canary', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'UTC']
  const MIN = Date.UTC(1000, 0, 1)
  const MAX = Date.UTC(9999, 11, 31, 23, 59, 59)

  it('at random instants from year 1000 to 9999', () => {
    fc.assert(fc.property(fc.integer({ min: MIN, max: MAX }), fc.constantFrom(...zones), (ms, tz) => {
      expect(formatDateTime(new Date(ms), tz)).toBe(reference(ms, tz))
    }), { numRuns: 3000 })
  })

  it('second by second across the 2026 DST changes of Madrid and Lord Howe (30-minute shift)', () => {
    for (const [tz, at] of [['Europe/Madrid', Date.UTC(2026, 2, 29, 1)], ['Europe/Madrid', Date.UTC(2026, 9, 25, 1)], ['Australia/Lord_Howe', Date.UTC(2026, 3, 4, 15)], ['Australia/Lord_Howe', Date.UTC(2026, 9, 3, 15, 30)]] as const) {
      for (let ms = at - 20 * 60_000; ms <= at + 20 * 60_000; ms += 1000) expect(formatDateTime(new Date(ms), tz), `${tz} ${new Date(ms).toISOString()}`).toBe(reference(ms, tz))
    }
  })

  it('second by second across historic changes that fall inside a quarter hour (Dublin 1916, Santiago 1910)', () => {
    for (const [tz, at] of [['Europe/Dublin', Date.UTC(1916, 4, 21, 2, 25, 21)], ['America/Santiago', Date.UTC(1910, 0, 10, 4, 42, 45)]] as const) {
      expect(at % 900_000).not.toBe(0)
      for (let ms = at - 20 * 60_000; ms <= at + 20 * 60_000; ms += 1000) expect(formatDateTime(new Date(ms), tz), `${tz} ${new Date(ms).toISOString()}`).toBe(reference(ms, tz))
    }
  })

  it('before 1900 (local mean time, offsets with seconds) and in years below 100', () => {
    for (const ms of [Date.UTC(1800, 5, 1, 12, 0, 0), Date.UTC(1900, 11, 31, 23, 59, 59), new Date('0050-06-01T12:00:00Z').getTime(), new Date('0001-01-01T00:00:00Z').getTime()]) {
      for (const tz of zones) expect(formatDateTime(new Date(ms), tz)).toBe(reference(ms, tz))
    }
  })
})

describe('isoText writes what Date#toISOString writes', () => {
  // Years 1000–9999 are written from the day texts; the rest by toISOString, which a year past 9999 or before 0 lengthens.
  const FIRST = Date.UTC(1000, 0, 1)
  const END = Date.UTC(10000, 0, 1)
  const seconds = (iso: string): string => iso.replace(/\.\d{3}Z$/, 'Z')

  it('at random instants, with and without milliseconds', () => {
    const instants = fc.oneof(fc.integer({ min: FIRST - 86_400_000, max: END + 86_400_000 }), fc.integer({ min: -8.64e15, max: 8.64e15 }))
    fc.assert(fc.property(instants, (ms) => {
      const reference = new Date(ms).toISOString()
      expect(isoText(new Date(ms))).toBe(reference)
      expect(isoText(new Date(ms), false)).toBe(seconds(reference))
    }), { numRuns: 5000 })
  })

  it('at the edges of the years it writes itself and of a day', () => {
    for (const ms of [FIRST - 1, FIRST, END - 1, END, 0, -1, 86_399_999, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 11, 31, 23, 59, 59, 5)]) {
      expect(isoText(new Date(ms))).toBe(new Date(ms).toISOString())
      expect(isoText(new Date(ms), false)).toBe(seconds(new Date(ms).toISOString()))
    }
  })

  it('refuses an invalid date as toISOString does', () => {
    expect(() => isoText(new Date(NaN))).toThrow(RangeError)
  })
})
