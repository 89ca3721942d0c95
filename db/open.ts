/**
 * Opens MikroORM over PostgreSQL (DATABASE_URL) or the embedded PGlite,
 * with the entities generated from modules.yaml and the service's own
 * tables. No schema change here (db/schema-sync.ts does that at start-up).
 * Used by the app's ORM plugin and by the command lines.
 */
import type { EntitySchema } from '@mikro-orm/core'
import { MikroORM, type Options } from '@mikro-orm/postgresql'
import type { Config } from '../core/config.js'
import type { Registry } from '../core/registry/types.js'
import { StoredNameStrategy } from './identifier.js'
import { buildEntity, type Row } from './module-entity.js'
import { SYSTEM_ENTITIES } from './system-entities.js'
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded.js'
import { ServiceConnection, ServiceDriver } from './driver.js'
import { SessionStatements } from './session-statements.js'
import { waitFor } from '../core/backoff.js'
import { redactUrl } from '../core/redact-url.js'

/** Where ORM debug lines and the pool's warnings go (a pino logger fits). */
export interface DbLogger {
  debug (obj: object, msg: string): void
  warn (obj: object, msg: string): void
}

/**
 * How long a request waits for a pooled connection, and a new connection
 * for PostgreSQL's answer, before it gives up with 503: a database that is
 * down refuses at once, one that cannot be reached (a lost network) would
 * otherwise hold requests for knex's default 60 s, or forever.
 */
const ACQUIRE_TIMEOUT_MS = 10_000
const CONNECT_TIMEOUT_MS = 5_000
/** Embedded: behind the longest transaction (an import of many rows), not behind an outage. */
const EMBEDDED_ACQUIRE_TIMEOUT_MS = 120_000

export interface OrmOptions {
  /** An embedded database already started by the caller (tests share one). */
  embedded?: EmbeddedDatabase
  /** Where PGlite keeps its files when this plugin starts it; default DATA_DIR/pgdata. */
  embeddedPath?: string
  /**
   * PostgreSQL not reachable yet: wait and retry with back-off (logging each
   * wait) for up to this long (ms; 0: for ever) instead of failing at once.
   */
  waitMs?: number
  /** Called at each wait (bin/server.ts then opens the port: /health answers, /ready is 503). */
  onWaiting?: () => void
}

/** Errors that waiting cannot fix: a refused login (SQLSTATE class 28). */
const fatalConnectError = (err: unknown): boolean => /^28/.test(String((err as { code?: unknown } | null)?.code ?? ''))

export interface Database {
  readonly orm: MikroORM
  readonly entities: ReadonlyMap<string, EntitySchema<Row>>
  readonly kind: 'postgresql' | 'embedded'
  /** Closes the ORM and an embedded database this call started. */
  close (): Promise<void>
}

/** Connects MikroORM to PostgreSQL or embedded PGlite (no schema change). Used by the plugin and the CLIs. */
export async function openDatabase (config: Config, registry: Registry, log: DbLogger, opts: OrmOptions = {}): Promise<Database> {
  const entities = new Map(registry.modules.map((m) => [m.name, buildEntity(m)]))
  let embedded: EmbeddedDatabase | undefined
  let ownEmbedded = false
  const connection: Partial<Options> = {}
  if (config.databaseUrl !== undefined) {
    connection.clientUrl = config.databaseUrl
  } else {
    embedded = opts.embedded
    if (embedded === undefined) {
      embedded = await startEmbeddedDatabase(opts.embeddedPath ?? `${config.dataDir}/pgdata`)
      ownEmbedded = true
    }
    Object.assign(connection, { host: embedded.host, port: embedded.port, dbName: embedded.dbName, user: 'postgres', password: 'postgres' })
  }
  try {
    const init = async (): Promise<MikroORM> => MikroORM.init({
      ...connection,
      entities: [...entities.values(), ...SYSTEM_ENTITIES],
      driver: ServiceDriver,
      // Names longer than PostgreSQL keeps are shortened with a hash (db/identifier.ts).
      namingStrategy: StoredNameStrategy,
      // min 0: no connection is kept open for its own sake, so after an
      // outage the pool refills with fresh connections on demand. A
      // connection the server dropped while idle is marked by knex (its
      // 'error' and 'end' events) and replaced on its next use, never
      // handed to a request and never an uncaught error.
      // Embedded: one connection. PGlite is one session, and @electric-sql/pglite-socket
      // runs each protocol message of each connection in turn, so two connections'
      // queries interleave between Parse and Bind and one loses its unnamed statement
      // ("unnamed prepared statement does not exist"), which background work (the event
      // feed's sealing, webhook deliveries) made frequent. One connection queues them in
      // the pool instead, for as long as a transaction holds it: the database is in this
      // process, so waiting is never an outage (docs/decisions.md "Embedded: one connection").
      pool: embedded === undefined
        ? { min: 0, max: 10, acquireTimeoutMillis: ACQUIRE_TIMEOUT_MS }
        : { min: 0, max: 1, acquireTimeoutMillis: EMBEDDED_ACQUIRE_TIMEOUT_MS },
      driverOptions: {
        connection: {
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
          keepAlive: true,
          // One request, one backend: parallel workers (PostgreSQL plans them for a count of
          // 100,000+ entries) are processes started per query, which on a small machine cost
          // more than they save (docs/performance.md "Figures behind the code's choices"),
          // and under concurrent requests they only add CPU.
          ...(embedded === undefined && { options: '-c max_parallel_workers_per_gather=0' }),
        },
        // knex would print "Connection Error: …" to the console for every dropped connection.
        log: {
          warn: (message: unknown) => { log.warn({ pool: String(message) }, 'database connection') },
          error: (message: unknown) => { log.warn({ pool: String(message) }, 'database connection') },
          deprecate: () => undefined,
          debug: () => undefined,
        },
      },
      allowGlobalContext: false,
      forceUtcTimezone: true,
      debug: false,
      discovery: { warnWhenNoEntities: false },
      logger: (message) => log.debug({ orm: message }, 'orm'),
    })
    const orm = config.databaseUrl === undefined || opts.waitMs === undefined
      ? await init()
      : await waitFor(init, {
        what: `PostgreSQL at ${redactUrl(config.databaseUrl)}`,
        deadlineMs: opts.waitMs,
        fatal: fatalConnectError,
        hint: 'check DATABASE_URL (host, port, user, password, database) and that PostgreSQL is up and reachable from here',
        onWait: (w) => { opts.onWaiting?.(); log.warn({ waitingFor: w.what, attempt: w.attempt, reason: w.reason, nextAttemptInMs: w.nextAttemptInMs }, `waiting for ${w.what} (${w.reason}); next attempt in ${w.nextAttemptInMs / 1000} s`) },
      })
    // Both modes run every query through db/driver.ts; PGlite's only
    // difference: its named statements are SQL's PREPARE and EXECUTE (db/session-statements.ts says why).
    if (embedded !== undefined) Object.assign(orm.em.getConnection() as ServiceConnection, { namedStatements: false, oneSession: true, ...(config.namedStatements && { session: new SessionStatements() }) })
    // Behind PgBouncer in transaction mode a statement prepared on one server connection is unknown to the next (docs/operations.md "PgBouncer").
    else if (!config.namedStatements) Object.assign(orm.em.getConnection() as ServiceConnection, { namedStatements: false })
    return {
      orm,
      entities,
      kind: embedded === undefined ? 'postgresql' : 'embedded',
      async close () {
        await orm.close(true)
        if (ownEmbedded) await embedded!.stop()
      },
    }
  } catch (err) {
    if (ownEmbedded) await embedded!.stop()
    throw err
  }
}

