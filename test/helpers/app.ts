/**
 * Builds app instances for a test file against its own database and Redis
 * prefix. Several instances made by one harness share both, like several
 * processes behind a load balancer (in embedded mode they share the
 * in-process stores, the one thing a single process can share).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { DestinationStream } from 'pino'
import { loadConfig, type Config } from '../../core/config.js'
import { buildApp, type BuildOptions } from '../../app.js'
import type { Registry } from '../../core/registry/types.js'
import { createStores, type StoreSet } from '../../stores/factory.js'
import { createTestDatabase, flushPrefix, newRedisPrefix, redisEnv, usingRedis, type TestDatabase } from './services.js'

export const ADMIN = { username: 'admin', password: 'admin-password-123' }
export const TEST_KEY = Buffer.alloc(32, 7).toString('base64')
/** The password of every user the tests create (test/helpers/users.ts, sample bodies). */
export const PASSWORD = 'contraseña-segura-123'

export interface Harness {
  readonly db: TestDatabase
  readonly redisPrefix: string
  readonly config: Config
  /** A new app instance on the shared database and stores. */
  app (overrides?: { env?: Record<string, string>, registry?: Registry, logStream?: DestinationStream, maintenance?: BuildOptions['maintenance'] }): Promise<FastifyInstance>
  /** Closes one instance now (the harness will not close it again). */
  closeApp (app: FastifyInstance): Promise<void>
  /** Forget everything held in Redis / the in-process stores (as after a Redis restart). */
  flushStores (): Promise<void>
  close (): Promise<void>
}

/**
 * The environment of a test instance: its database (none: embedded), the
 * run's Redis when REDIS_URL is set, fixed secrets and the first admin.
 */
export function testEnv (base: { dataDir: string, redisPrefix: string, databaseUrl?: string }, extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ...(base.databaseUrl !== undefined && { DATABASE_URL: base.databaseUrl }),
    // The run's Redis, unless the test points this instance at its own.
    ...(extra.REDIS_URL === undefined && extra.REDIS_SENTINELS === undefined && redisEnv()),
    REDIS_PREFIX: base.redisPrefix,
    JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    ENCRYPTION_KEY: TEST_KEY,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    TZ: 'Europe/Madrid',
    DATA_DIR: base.dataDir,
    LOG_LEVEL: 'silent',
    // No metrics listener unless the test asks for one (test/integration/metrics.test.ts).
    METRICS_PORT: '0',
    // Tests send far more than 50 requests a minute from one address; the
    // rate-limit tests set their own small limits.
    RATE_LIMIT_IP_MAX: '1000000',
    RATE_LIMIT_TOKEN_MAX: '1000000',
    // Tests poll /ready; the /docs and /ready tests set their own window.
    RATE_LIMIT_DOCS_MAX: '1000000',
    // Webhook targets on 127.0.0.1 (the tests' receivers); test/long/webhooks.test.ts sets it false where it tests the refusal.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // A write's own seal a second later (records/events/feed-hub.ts) would land at random in the tests that
    // count the statements a request sends, and in those that tamper before a seal they run themselves;
    // test/integration/prompt-seal.test.ts and the servers the fault and browser tests start keep the default.
    CHAIN_SEAL_DELAY: '1h',
    ...extra,
  }
}

/** `embedded`: on an embedded database even when DATABASE_URL is set (createTestDatabase). */
export async function createHarness (opts: { embedded?: boolean } = {}): Promise<Harness> {
  const db = await createTestDatabase(opts)
  const redisPrefix = newRedisPrefix()
  const dataDir = mkdtempSync(join(tmpdir(), 'policia-test-'))
  const apps: FastifyInstance[] = []
  // In-process stores (no Redis client), every one shared by the instances as processes share Redis.
  const memoryStores = (): StoreSet => createStores(undefined, redisPrefix)
  let memory = memoryStores()
  const env = (extra: Record<string, string> = {}): Record<string, string | undefined> =>
    testEnv({ dataDir, redisPrefix, ...(db.url !== undefined && { databaseUrl: db.url }) }, extra)
  return {
    db,
    redisPrefix,
    config: loadConfig(env()),
    async app (overrides = {}) {
      const app = await buildApp({
        config: loadConfig(env(overrides.env)),
        // Silent, unless the test reads the log (then the service's own logger options, at LOG_LEVEL).
        ...(overrides.logStream === undefined ? { logger: false } : { logStream: overrides.logStream }),
        ...(overrides.registry !== undefined && { registry: overrides.registry }),
        ...(db.embedded !== undefined && { embedded: db.embedded }),
        // No embedded vacuum rounds unless the test asks (test/long/embedded-maintenance.test.ts):
        // they run on a timer, and tests that count the statements a request sends would see them at random.
        maintenance: overrides.maintenance ?? false,
        // Shared in-process stores stand in for Redis, unless this instance is given one.
        ...(!usingRedis && overrides.env?.REDIS_URL === undefined && overrides.env?.REDIS_SENTINELS === undefined && { stores: memory }),
      })
      apps.push(app)
      return app
    },
    async closeApp (app) {
      const i = apps.indexOf(app)
      if (i >= 0) apps.splice(i, 1)
      await app.close()
    },
    async flushStores () {
      if (usingRedis) await flushPrefix(redisPrefix)
      else memory = memoryStores()
    },
    async close () {
      for (const app of apps) await app.close()
      await flushPrefix(redisPrefix)
      await db.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
