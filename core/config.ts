/**
 * The environment contract (docs/operator-guide.md, "Configuration"), read once, checked and
 * frozen. In development without secrets, JWT_SECRET and ENCRYPTION_KEY are
 * generated once and kept in DATA_DIR/secrets.json; with
 * NODE_ENV=production, DATABASE_URL or Redis (REDIS_URL, REDIS_SENTINELS) the service refuses to
 * start without them, and NODE_ENV=production needs DATABASE_URL.
 */
import { randomBytes, createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ConfigError } from './errors.js'
import { s3FilesConfig, type S3FilesConfig } from './files-s3-config.js'
import { redisTarget, type RedisTarget } from './redis-config.js'
import { ADDRESS_LIST_FORMS, parseAddressList, type AddressList } from './address-list.js'
import { isCleanText } from './text.js'

export interface Config {
  readonly production: boolean
  readonly port: number
  readonly host: string
  /** PostgreSQL URL; undefined means embedded PGlite under dataDir. */
  readonly databaseUrl?: string
  /** Queries as named prepared statements (DATABASE_NAMED_STATEMENTS); off behind a transaction-mode pooler. */
  readonly namedStatements: boolean
  /** One Redis (REDIS_URL) or the primary Sentinels name (REDIS_SENTINELS); undefined means in-process stores. */
  readonly redis?: RedisTarget
  /** Namespace of every Redis key this instance writes. */
  readonly redisPrefix: string
  readonly jwtSecret: string
  /** Current AES-256 key first, then old keys kept for reading. */
  readonly encryptionKeys: readonly Buffer[]
  readonly adminUsername?: string
  readonly adminPassword?: string
  readonly rateLimit: {
    readonly ipMax: number
    readonly ipWindowMs: number
    readonly tokenMax: number
    readonly tokenWindowMs: number
    /** Client addresses whose unauthenticated requests skip every per-IP limit (RATE_LIMIT_IP_EXEMPT); the token limit still applies. */
    readonly ipExempt: AddressList
    /** The per-IP window of /docs*, of /ready and of the console's files, each counted apart (docs/user-guide.md "Rate limits"). */
    readonly docsMax: number
    readonly docsWindowMs: number
  }
  /** Which peers may set X-Forwarded-For: nobody, everybody, the nearest n hops, or these addresses/CIDRs. */
  readonly trustProxy: TrustProxy
  /** Send Strict-Transport-Security (HSTS=true): only where clients reach the service over HTTPS. */
  readonly hsts: boolean
  readonly timeZone: string
  readonly dataDir: string
  readonly modulesFile: string
  readonly logLevel: string
  /** Token lifetime in seconds (7 days). */
  readonly tokenTtlSeconds: number
  /** Where signed checkpoints of the global chain are published, one new file each (docs/operator-guide.md "Integrity"). */
  readonly checkpointDir: string
  /** How often the global chain is sealed and its head published. */
  readonly checkpointIntervalMs: number
  /** How long a write waits at most before its instance seals it into the global chain (records/events/feed-hub.ts). */
  readonly chainSealDelayMs: number
  /** How often an instance asks whether today's retention review has run (REVIEW_CHECK_INTERVAL; docs/operator-guide.md "Retention review"). */
  readonly reviewCheckMs: number
  /** What heads every page of a printed record (FORCE_NAME, FORCE_LOGO; docs/operator-guide.md "Printed records"). */
  readonly printing: { readonly force: string, readonly logo?: string }
  /** Origins allowed to call the API from a browser (CORS); empty: none. */
  readonly corsOrigins: readonly string[]
  /** Port of the Prometheus listener (GET /metrics); 0: no metrics listener. */
  readonly metricsPort: number
  /** How long the start waits for PostgreSQL and Redis before giving up; 0: for ever. */
  readonly startupWaitMs: number
  /** A list slower than this is logged with its filter shape (SLOW_LIST; docs/administrator-guide.md "Indexes"). */
  readonly slowListMs: number
  /** Largest body `POST /{module}/importar` takes (IMPORT_MAX_BYTES; docs/user-guide.md "Import (importar)"); every other body stays within 1 MiB. */
  readonly importMaxBytes: number
  /** Most records one import takes (IMPORT_MAX_ROWS; docs/user-guide.md "Import (importar)"): 413 `Demasiadas filas` at the next row. */
  readonly importMaxRows: number
  /** Evidence files (docs/operator-guide.md "Evidence files"): their directory (FILES_DIR) or bucket (FILES_S3_*) and the largest upload (FILE_MAX_BYTES). */
  readonly files: {
    /** When set, files live in this bucket and `dir` is unused. */
    readonly s3?: S3FilesConfig
    readonly dir: string
    readonly maxBytes: number
  }
  /** The live stream (docs/user-guide.md "Events: the live stream (eventos)"): how far back a reconnect may resume, in days. */
  readonly eventRetentionDays: number
  /**
   * How long the service keeps an idle client connection open (KEEP_ALIVE_TIMEOUT;
   * docs/operator-guide.md "nginx in front"): longer than the proxy's idle upstream
   * timeout, so the proxy, not the service, closes an idle connection.
   */
  readonly keepAliveTimeoutMs: number
  /** Seconds between the comments that keep an idle stream open through proxies. */
  readonly eventHeartbeatSeconds: number
  /** How far V8's heap may grow past what a full collection left, in percent (HEAP_GROWTH_PERCENT; 0: V8's own rule; bin/heap-growth.ts). */
  readonly heapGrowthPercent: number
  /** Open streams a user may hold across instances. */
  readonly eventStreamsPerUser: number
  /** Idempotency-Key (docs/operator-guide.md "Idempotency keys"): how long a first answer is replayed, how long a running request holds its key unless renewed. */
  readonly idempotency: {
    readonly ttlMs: number
    readonly leaseMs: number
  }
  /** Webhook delivery (docs/operator-guide.md "Webhooks"). */
  readonly webhooks: {
    /** Targets on addresses that are not public (core/non-public-address.ts) are allowed (WEBHOOK_ALLOW_PRIVATE). */
    readonly allowPrivate: boolean
    /** The first retry's delay; each next one doubles (WEBHOOK_RETRY_BASE, at most 10 s). */
    readonly retryBaseMs: number
    /** How long a failing event is retried before the subscription is paused (WEBHOOK_RETRY_WINDOW, 24 h). */
    readonly retryWindowMs: number
    /** How long an instance's hold on a subscription lasts unless renewed (WEBHOOK_LEASE, at most 24 s). */
    readonly leaseMs: number
    /** This instance takes leases and delivers (WEBHOOK_DELIVERY); false: it serves requests only. */
    readonly deliver: boolean
  }
}

type Env = Record<string, string | undefined>

export type TrustProxy = boolean | number | readonly string[]

function int (env: Env, name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be a whole number ≥ ${min}${max < Number.MAX_SAFE_INTEGER ? ` and ≤ ${max}` : ''} (got "${raw}")`)
  return n
}

/** A window in seconds, or with a unit: 60, 60s, 15m, 1h. */
function windowMs (env: Env, name: string, fallbackMs: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallbackMs
  const m = /^(\d+)\s*(ms|s|m|h)?$/.exec(raw.trim())
  if (m === null || Number(m[1]) === 0) throw new ConfigError(`${name} must be a duration such as 60, 60s, 15m or 1h (got "${raw}")`)
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
  return Number(m[1]) * unit
}

function key (raw: string, name: string): Buffer {
  const buf = Buffer.from(raw.trim(), 'base64')
  if (buf.length !== 32) throw new ConfigError(`${name} must be 32 bytes encoded in base64 (got ${buf.length} bytes); make one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`)
  return buf
}

const TRUST_PROXY_FORMS = `true, false, a hop count (1, 2 …: trusts whatever is that many hops back, forgeable by a client that reaches the service directly) or ${ADDRESS_LIST_FORMS}`

/**
 * Which peers may set X-Forwarded-For (docs/operator-guide.md "Client address and TRUST_PROXY"): false, true, a hop
 * count, or the proxies' addresses/CIDRs (handed to Fastify's trustProxy
 * as written). Anything else stops the start.
 */
function trustProxy (raw: string | undefined): TrustProxy {
  const value = (raw ?? '').trim()
  if (value === '' || value === 'false') return false
  if (value === 'true') return true
  if (/^\d{1,3}$/.test(value)) return Number(value) === 0 ? false : Number(value)
  const { list, bad } = parseAddressList(value)
  if (bad.length > 0) throw new ConfigError(`TRUST_PROXY must be ${TRUST_PROXY_FORMS}; "${bad.join('", "')}" is none of these (got "${raw}"); name your proxies' addresses, for example TRUST_PROXY=10.0.0.0/8,127.0.0.1`)
  return list.entries
}

/** RATE_LIMIT_IP_EXEMPT: addresses/CIDRs; unset or empty: none. */
function ipExempt (raw: string | undefined): AddressList {
  const { list, bad } = parseAddressList(raw)
  if (bad.length > 0) throw new ConfigError(`RATE_LIMIT_IP_EXEMPT must be ${ADDRESS_LIST_FORMS}, or empty for none; "${bad.join('", "')}" is not one (got "${raw}"), for example RATE_LIMIT_IP_EXEMPT=192.0.2.10,198.51.100.0/24`)
  return list
}

/** A switch: true or false (unset or empty: the fallback). */
function flag (env: Env, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim()
  if (raw === '') return fallback
  if (raw === 'true' || raw === 'false') return raw === 'true'
  throw new ConfigError(`${name} must be true or false (got "${env[name]}")`)
}

/**
 * CORS_ORIGINS: comma-separated origins, each exactly scheme://host[:port]
 * as a browser sends it in `Origin` (no path, no trailing slash, no `*`).
 */
function corsOrigins (raw: string | undefined): readonly string[] {
  const entries = (raw ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')
  for (const entry of entries) {
    let origin: string | undefined
    try {
      const u = new URL(entry)
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '') origin = u.origin
    } catch { /* not a URL */ }
    if (origin !== entry) {
      throw new ConfigError(`CORS_ORIGINS must be a comma-separated list of origins such as https://intranet.policia.example or http://localhost:5173 (scheme, host and port only: no path, no trailing slash, no *); "${entry}" is not one${origin !== undefined ? ` (did you mean ${origin}?)` : ''}`)
    }
  }
  return Object.freeze([...new Set(entries)])
}

/** A duration (windowMs) no longer than `maxMs`, for `why`. */
function atMost (env: Env, name: string, fallbackMs: number, maxMs: number, why: string): number {
  const ms = windowMs(env, name, fallbackMs)
  if (ms > maxMs) throw new ConfigError(`${name} must be at most ${maxMs / 1000}s: ${why} (got "${env[name]}")`)
  return ms
}

/** STARTUP_WAIT: a duration, or 0 / unset for "wait for ever". */
function startupWaitMs (env: Env): number {
  const raw = (env.STARTUP_WAIT ?? '').trim()
  if (raw === '' || raw === '0') return 0
  return windowMs(env, 'STARTUP_WAIT', 0)
}

const SECRET_RECIPE = 'make JWT_SECRET with: node -e "console.log(require(\'crypto\').randomBytes(48).toString(\'base64\'))" and ENCRYPTION_KEY with: node -e "console.log(require(\'crypto\').randomBytes(32).toString(\'base64\'))"'

function checkTimeZone (tz: string): string {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: tz })
  } catch {
    throw new ConfigError(`TZ "${tz}" is not a known IANA time zone (for example Europe/Madrid)`)
  }
  return tz
}

/** Development secrets, generated on first start and kept for the next ones. */
function devSecrets (dataDir: string): { jwtSecret: string, encryptionKey: string } {
  const file = join(dataDir, 'secrets.json')
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as { jwtSecret: string, encryptionKey: string }
  mkdirSync(dataDir, { recursive: true })
  const secrets = { jwtSecret: randomBytes(48).toString('base64'), encryptionKey: randomBytes(32).toString('base64') }
  writeFileSync(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 })
  return secrets
}

export function loadConfig (env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production'
  const dataDir = resolve(env.DATA_DIR ?? './data')
  const missing = ['JWT_SECRET', 'ENCRYPTION_KEY'].filter((n) => (env[n] ?? '') === '')
  if (production && missing.length > 0) {
    throw new ConfigError(`NODE_ENV=production needs ${missing.join(' and ')}; refusing to start without ${missing.length > 1 ? 'them' : 'it'} (${SECRET_RECIPE})`)
  }
  if (production && (env.DATABASE_URL ?? '') === '') {
    throw new ConfigError('NODE_ENV=production needs DATABASE_URL (postgres://user:password@host:5432/policia); the embedded database is for development only, refusing to start without it')
  }
  // Shared services mean several instances, or data that outlives this
  // machine: secrets generated into one instance's DATA_DIR would differ
  // between instances and be lost with the directory.
  const shared = ['DATABASE_URL', 'REDIS_URL', 'REDIS_SENTINELS'].filter((n) => (env[n] ?? '') !== '')
  if (shared.length > 0 && missing.length > 0) {
    throw new ConfigError(`${shared.join(' and ')} ${shared.length > 1 ? 'are' : 'is'} set, so ${missing.join(' and ')} must be set too: the secrets generated for development (DATA_DIR/secrets.json) are refused with shared services; ${SECRET_RECIPE} (to keep the development ones, copy them from ${join(dataDir, 'secrets.json')})`)
  }
  const dev = missing.length > 0 ? devSecrets(dataDir) : undefined
  const jwtSecret = env.JWT_SECRET || dev!.jwtSecret
  if (jwtSecret.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 characters long')
  const current = key(env.ENCRYPTION_KEY || dev!.encryptionKey, 'ENCRYPTION_KEY')
  const s3 = s3FilesConfig(env)
  const redis = redisTarget(env)
  const old = (env.ENCRYPTION_KEYS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => key(s, 'ENCRYPTION_KEYS'))
  const config: Config = {
    production,
    port: int(env, 'PORT', 3000, 0, 65535),
    host: env.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    namedStatements: flag(env, 'DATABASE_NAMED_STATEMENTS', true),
    ...(redis !== undefined && { redis }),
    redisPrefix: env.REDIS_PREFIX ?? 'policia:',
    jwtSecret,
    encryptionKeys: Object.freeze([current, ...old.filter((k) => !k.equals(current))]),
    ...(env.ADMIN_USERNAME ? { adminUsername: env.ADMIN_USERNAME } : {}),
    ...(env.ADMIN_PASSWORD ? { adminPassword: env.ADMIN_PASSWORD } : {}),
    rateLimit: Object.freeze({
      ipMax: int(env, 'RATE_LIMIT_IP_MAX', 50),
      ipWindowMs: windowMs(env, 'RATE_LIMIT_IP_WINDOW', 60_000),
      tokenMax: int(env, 'RATE_LIMIT_TOKEN_MAX', 1000),
      tokenWindowMs: windowMs(env, 'RATE_LIMIT_TOKEN_WINDOW', 3_600_000),
      ipExempt: ipExempt(env.RATE_LIMIT_IP_EXEMPT),
      docsMax: int(env, 'RATE_LIMIT_DOCS_MAX', 60),
      docsWindowMs: windowMs(env, 'RATE_LIMIT_DOCS_WINDOW', 60_000),
    }),
    trustProxy: trustProxy(env.TRUST_PROXY),
    hsts: flag(env, 'HSTS', false),
    timeZone: checkTimeZone(env.TZ || 'Europe/Madrid'),
    dataDir,
    modulesFile: resolve(env.MODULES_FILE ?? 'modules.yaml'),
    logLevel: env.LOG_LEVEL ?? 'info',
    tokenTtlSeconds: 7 * 24 * 3600,
    checkpointDir: resolve(env.CHECKPOINT_DIR || join(dataDir, 'puntos-control')),
    checkpointIntervalMs: windowMs(env, 'CHECKPOINT_INTERVAL', 60_000),
    chainSealDelayMs: windowMs(env, 'CHAIN_SEAL_DELAY', 1_000),
    reviewCheckMs: windowMs(env, 'REVIEW_CHECK_INTERVAL', 3_600_000),
    printing: Object.freeze({ force: forceName(env.FORCE_NAME), ...((env.FORCE_LOGO ?? '') !== '' && { logo: resolve(env.FORCE_LOGO!) }) }),
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    metricsPort: int(env, 'METRICS_PORT', 9464, 0, 65535),
    startupWaitMs: startupWaitMs(env),
    slowListMs: windowMs(env, 'SLOW_LIST', 200),
    importMaxBytes: int(env, 'IMPORT_MAX_BYTES', 50 * 1024 * 1024),
    importMaxRows: int(env, 'IMPORT_MAX_ROWS', 100_000),
    files: Object.freeze({
      dir: resolve(env.FILES_DIR || join(dataDir, 'archivos')),
      maxBytes: int(env, 'FILE_MAX_BYTES', 50 * 1024 * 1024, 1),
      ...(s3 !== undefined && { s3 }),
    }),
    keepAliveTimeoutMs: atMost(env, 'KEEP_ALIVE_TIMEOUT', 75_000, 3_600_000, 'an idle connection held longer only holds a socket'),
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 7),
    eventHeartbeatSeconds: int(env, 'EVENT_HEARTBEAT_SECONDS', 15),
    heapGrowthPercent: int(env, 'HEAP_GROWTH_PERCENT', 50, 0, 1000),
    eventStreamsPerUser: int(env, 'EVENT_STREAMS_PER_USER', 5),
    idempotency: Object.freeze({
      ttlMs: windowMs(env, 'IDEMPOTENCY_TTL', 24 * 3_600_000),
      leaseMs: atMost(env, 'IDEMPOTENCY_LEASE', 30_000, 600_000, 'a key held by an instance that died stays blocked for as long'),
    }),
    webhooks: Object.freeze({
      allowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      retryBaseMs: atMost(env, 'WEBHOOK_RETRY_BASE', 5_000, 10_000, 'the first retry must come within 10 s'),
      retryWindowMs: windowMs(env, 'WEBHOOK_RETRY_WINDOW', 24 * 3_600_000),
      leaseMs: atMost(env, 'WEBHOOK_LEASE', 20_000, 24_000, 'another instance must take over a dead one\'s subscriptions within 30 s'),
      deliver: flag(env, 'WEBHOOK_DELIVERY', true),
    }),
  }
  return Object.freeze(config)
}

/** The force's name atop a printed record: one line of clean text. */
function forceName (value: string | undefined): string {
  const name = (value ?? '').trim()
  if (name === '') return 'Policía Local'
  if (name.length > 120 || !isCleanText(name) || /[\r\n]/.test(name)) throw new ConfigError('FORCE_NAME must be one line of at most 120 characters, e.g. FORCE_NAME="Policía Local de Villanueva"')
  return name
}

/** Short, stable id of a key, stored beside each ciphertext. */
export function keyId (k: Buffer): string {
  return createHash('sha256').update(k).digest('hex').slice(0, 8)
}
