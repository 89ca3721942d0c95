/**
 * The backing services of a test file: a database of its own (a fresh
 * PostgreSQL database when DATABASE_URL is set, else an in-memory PGlite)
 * and a Redis key prefix of its own when REDIS_URL (or REDIS_SENTINELS and
 * REDIS_SENTINEL_NAME: `npm run test:sentinel`) is set, else in-process
 * stores. Never mocks: these are the real services the app uses.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Redis, RedisOptions } from 'ioredis'
import { openPGlite, startEmbeddedDatabase, type EmbeddedDatabase } from '../../db/embedded.js'
import { redisTarget } from '../../core/redis-config.js'
import { redisClient } from '../../stores/redis-client.js'

export const usingPostgres = (process.env.DATABASE_URL ?? '') !== ''
/** The run's Redis, as the service would read it from this environment (read when asked: a global setup may set it, test/helpers/sentinel-setup.ts). */
const target = (): ReturnType<typeof redisTarget> => redisTarget(process.env)
export const usingRedis = target() !== undefined

/** A client of the run's Redis (REDIS_URL's, or the Sentinels' primary), built as the service builds its own; the caller disconnects it. */
export function testRedis (options: RedisOptions = {}): Redis {
  const t = target()
  if (t === undefined) throw new Error('no REDIS_URL or REDIS_SENTINELS in this run')
  return redisClient(t, options)
}

/** The variables that point an instance at the run's Redis (none without one). */
export function redisEnv (): Record<string, string> {
  const t = target()
  if (t === undefined) return {}
  return t.kind === 'url' ? { REDIS_URL: t.url } : { REDIS_SENTINELS: process.env.REDIS_SENTINELS!, REDIS_SENTINEL_NAME: t.name }
}

function runId (): string {
  return process.env.TEST_RUN_ID ?? 'adhoc'
}

function adminUrl (): string {
  return process.env.DATABASE_URL!
}

function withDatabase (url: string, db: string): string {
  const u = new URL(url)
  u.pathname = `/${db}`
  return u.toString()
}

export interface TestDatabase {
  /** Set for PostgreSQL. */
  readonly url?: string
  /** Set for embedded mode. */
  readonly embedded?: EmbeddedDatabase
  /** Runs SQL directly, bypassing the service (to assert what is stored). */
  query<T = Record<string, unknown>> (sql: string, params?: unknown[]): Promise<T[]>
  drop (): Promise<void>
}

/**
 * A client's queries one after another: node-postgres queues concurrent
 * queries on one client itself, but warns that pg@9 will refuse them, and
 * tests send some together (Promise.all).
 */
function serialQuery (client: pg.Client): TestDatabase['query'] {
  let last: Promise<unknown> = Promise.resolve()
  return async (sql, params) => {
    const run = last.then(async () => client.query(sql, params))
    last = run.catch(() => undefined)
    return (await run).rows
  }
}

/** `embedded`: an embedded database even when DATABASE_URL is set (a test of embedded mode alone). */
export async function createTestDatabase (opts: { embedded?: boolean } = {}): Promise<TestDatabase> {
  if (usingPostgres && opts.embedded !== true) {
    const name = `t_${runId()}_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: adminUrl() })
    await admin.connect()
    await admin.query(`create database "${name}"`)
    await admin.end()
    const url = withDatabase(adminUrl(), name)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    return {
      url,
      query: serialQuery(client),
      async drop () {
        await client.end()
        const a = new pg.Client({ connectionString: adminUrl() })
        await a.connect()
        await a.query(`drop database if exists "${name}" with (force)`)
        await a.end()
      },
    }
  }
  const embedded = await startEmbeddedDatabase('memory://', await freshCluster(), EMBEDDED_SETTINGS)
  const client = new pg.Client({ host: embedded.host, port: embedded.port, database: embedded.dbName, user: 'postgres', password: 'postgres' })
  await client.connect()
  return {
    embedded,
    query: serialQuery(client),
    async drop () {
      await client.end()
      await embedded.stop()
    },
  }
}

/**
 * 16 MB of shared buffers, not PGlite's 128: a test's database is small,
 * and a start takes time with their size (1.1 s from a dump with 128 MB,
 * 0.6 s with 16; docs/testing.md "How long it takes").
 */
const EMBEDDED_SETTINGS = ['shared_buffers=16MB']

/**
 * A new embedded cluster's data directory, made once per worker process
 * (the workers keep their modules from file to file): each file's
 * throw-away database starts from it, faster than initdb (0.6 s against
 * 2.4 s on the 2-core machine of 12-02).
 */
let freshClusterDump: Promise<Blob> | undefined
async function freshCluster (): Promise<Blob> {
  freshClusterDump ??= (async () => {
    const db = await openPGlite('memory://', undefined, EMBEDDED_SETTINGS)
    try {
      return await db.dumpDataDir('none')
    } finally {
      await db.close()
    }
  })()
  return await freshClusterDump
}

export function newRedisPrefix (): string {
  return `test:${runId()}:${randomBytes(4).toString('hex')}:`
}

/** Deletes every key under a prefix (a "Redis restart" for one test). */
export async function flushPrefix (prefix: string): Promise<void> {
  if (target() === undefined) return
  const redis = testRedis()
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await redis.del(...keys)
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

export async function dropRunDatabases (run: string): Promise<void> {
  if (!usingPostgres) return
  const admin = new pg.Client({ connectionString: adminUrl() })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname like $1', [`t_${run}_%`])
    for (const r of rows) await admin.query(`drop database if exists "${r.datname}" with (force)`)
  } finally {
    await admin.end()
  }
}

export async function dropRunKeys (run: string): Promise<void> {
  await flushPrefix(`test:${run}:`)
}
