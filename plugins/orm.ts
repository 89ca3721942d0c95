/**
 * MikroORM over PostgreSQL (DATABASE_URL) or embedded PGlite. Entities are
 * generated from modules.yaml; the schema is synchronised at start-up; every
 * request gets its own EntityManager fork; the ORM (and the embedded
 * database) close in onClose.
 */
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../core/config.js'
import type { Registry } from '../core/registry/types.js'
import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql'
import { buildEntity, type Row } from '../db/module-entity.js'
import { SessionEntity } from '../db/session-entity.js'
import { SystemKeyEntity } from './system-keys.js'
import { HistoryEntity } from '../records/history.js'
import { ReadLogEntity } from '../records/read-log.js'
import { syncSchema } from '../db/schema-sync.js'
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.js'
import type { EntitySchema } from '@mikro-orm/core'

declare module 'fastify' {
  interface FastifyInstance {
    orm: MikroORM
    /** EntitySchema of each module, by module name. */
    entities: ReadonlyMap<string, EntitySchema<Row>>
    /** 'postgresql' or 'embedded'. */
    databaseKind: 'postgresql' | 'embedded'
  }
  interface FastifyRequest {
    em: EntityManager
  }
}

export interface OrmOptions {
  /** An embedded database already started by the caller (tests share one). */
  embedded?: EmbeddedDatabase
  /** Where PGlite keeps its files when this plugin starts it; default DATA_DIR/pgdata. */
  embeddedPath?: string
}

export interface Database {
  readonly orm: MikroORM
  readonly entities: ReadonlyMap<string, EntitySchema<Row>>
  readonly kind: 'postgresql' | 'embedded'
  /** Closes the ORM and an embedded database this call started. */
  close (): Promise<void>
}

/** Connects MikroORM to PostgreSQL or embedded PGlite (no schema change). Used by the plugin and the CLIs. */
export async function openDatabase (config: Config, registry: Registry, log: FastifyBaseLogger, opts: OrmOptions = {}): Promise<Database> {
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
    const orm = await MikroORM.init({
      ...connection,
      entities: [...entities.values(), SessionEntity, SystemKeyEntity, HistoryEntity, ReadLogEntity],
      pool: { min: 0, max: embedded === undefined ? 10 : 4 },
      allowGlobalContext: false,
      forceUtcTimezone: true,
      debug: false,
      discovery: { warnWhenNoEntities: false },
      logger: (message) => log.debug({ orm: message }, 'orm'),
    })
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

async function ormPlugin (app: FastifyInstance, opts: OrmOptions): Promise<void> {
  const db = await openDatabase(app.config, app.registry, app.log, opts)
  const { orm, entities } = db
  app.addHook('onClose', async () => { await db.close() })
  const applied = await syncSchema(orm, app.config.modulesFile, db.kind === 'postgresql')
  if (applied.length > 0) app.log.info({ statements: applied.length }, 'database schema updated from modules.yaml')
  app.decorate('orm', orm)
  app.decorate('entities', entities)
  app.decorate('databaseKind', db.kind)
  app.decorateRequest('em', null as unknown as EntityManager)
  app.addHook('onRequest', async (request) => {
    request.em = orm.em.fork()
  })
}

export default fp(ormPlugin, { name: 'policia-orm', fastify: '5.x', dependencies: ['policia-config'] })
