/**
 * What a command line that writes records opens (`npm run users`, `npm run
 * import`): the database, Redis when configured and reachable (else the
 * in-process stores; the database stays the safety net of ids and of
 * revocations), the keys, and the records layer with the users module's
 * policy on its hook bus, as the service builds it (plugins/records.ts).
 * Everything is closed when `fn` ends.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import pino from 'pino'
import type { Redis } from 'ioredis'
import { describeRedis, type RedisTarget } from '../../core/redis-config.js'
import { redisClient } from '../../stores/redis-client.js'
import { loadConfig, type Config } from '../../core/config.js'
import { compileAccess } from '../../core/access.js'
import { createFieldCipher } from '../../core/crypto.js'
import { ConfigError } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { Registry } from '../../core/registry/types.js'
import { openDatabase } from '../../db/open.js'
import type { EmbeddedDatabase } from '../../db/embedded.js'
import { loadSystemKeys } from '../../db/system-keys.js'
import { RecordsLayer } from '../../records/records-layer.js'
import { subscribeUsersPolicy } from '../../records/users/users-policy.js'
import type { AttemptLogStore } from '../../stores/attempt-logs/contract.js'
import { createStores } from '../../stores/factory.js'

export interface SessionOptions {
  env?: Record<string, string | undefined>
  /** An embedded database already running in this process (tests). */
  embedded?: EmbeddedDatabase
}

export interface RecordsSession {
  readonly config: Config
  readonly registry: Registry
  readonly em: EntityManager
  readonly records: RecordsLayer
  /**
   * The login lock-out's logs the service keeps: Redis's when REDIS_URL is
   * set and answers; undefined otherwise (in process, only the service reaches them).
   */
  readonly attemptLogs?: AttemptLogStore
}

export async function withRecords (opts: SessionOptions, err: (t: string) => void, fn: (session: RecordsSession) => Promise<number>): Promise<number> {
  const config = loadConfig(opts.env)
  const registry = loadRegistry(config.modulesFile)
  const db = await openDatabase(config, registry, pino({ level: 'silent' }), opts.embedded === undefined ? {} : { embedded: opts.embedded })
  let redis: Redis | undefined
  try {
    const em = db.orm.em.fork()
    if (await em.getConnection().execute(`select to_regclass('"${registry.usersModule.table}"') as t`).then((r) => r[0]?.t === null)) {
      throw new ConfigError(`the database has no "${registry.usersModule.table}" table yet: start the service once (npm start) to create the schema, then run the command again`)
    }
    if (config.redis !== undefined) redis = await connectRedis(config.redis, err)
    const stores = createStores(redis, config.redisPrefix)
    const keys = await loadSystemKeys(em, config.encryptionKeys)
    const records = new RecordsLayer({ registry, access: compileAccess(registry), cipher: createFieldCipher(config.encryptionKeys, keys), sequences: stores.sequences, timeZone: config.timeZone })
    subscribeUsersPolicy(records.hooks, registry.usersModule, records.access, stores.sessions)
    return await fn({ config, registry, em, records, ...(redis !== undefined && { attemptLogs: stores.attemptLogs }) })
  } finally {
    redis?.disconnect()
    await db.close()
  }
}

/** Redis when it answers within a few seconds; otherwise the database alone does (the epoch tells the instances). */
async function connectRedis (target: RedisTarget, err: (t: string) => void): Promise<Redis | undefined> {
  const client = redisClient(target, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => null })
  client.on('error', () => undefined)
  try {
    await client.connect()
    return client
  } catch {
    client.disconnect()
    err(`${describeRedis(target)} does not answer: the change is made in the database alone; the instances notice it within 2 s through the revocation epoch.\n`)
    return undefined
  }
}
