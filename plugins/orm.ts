/**
 * MikroORM over PostgreSQL (DATABASE_URL) or embedded PGlite. Entities are
 * generated from modules.yaml; the schema is synchronised at start-up; every
 * request gets its own EntityManager fork; the ORM (and the embedded
 * database) close in onClose.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql'
import { buildEntity, type Row } from '../modules/build-entity.js'
import { SessionEntity } from './session-entity.js'
import { SystemKeyEntity } from './system-keys.js'
import { syncSchema } from './schema-sync.js'
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded-db.js'
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

async function ormPlugin (app: FastifyInstance, opts: OrmOptions): Promise<void> {
  const entities = new Map(app.registry.modules.map((m) => [m.name, buildEntity(m)]))
  let embedded: EmbeddedDatabase | undefined
  let ownEmbedded = false
  const connection: Partial<Options> = {}
  if (app.config.databaseUrl !== undefined) {
    connection.clientUrl = app.config.databaseUrl
  } else {
    embedded = opts.embedded
    if (embedded === undefined) {
      embedded = await startEmbeddedDatabase(opts.embeddedPath ?? `${app.config.dataDir}/pgdata`)
      ownEmbedded = true
    }
    Object.assign(connection, { host: embedded.host, port: embedded.port, dbName: embedded.dbName, user: 'postgres', password: 'postgres' })
  }
  let orm: MikroORM
  try {
    orm = await MikroORM.init({
      ...connection,
      entities: [...entities.values(), SessionEntity, SystemKeyEntity],
      pool: { min: 0, max: embedded === undefined ? 10 : 4 },
      allowGlobalContext: false,
      forceUtcTimezone: true,
      debug: false,
      discovery: { warnWhenNoEntities: false },
      logger: (message) => app.log.debug({ orm: message }, 'orm'),
    })
  } catch (err) {
    if (ownEmbedded) await embedded!.stop()
    throw err
  }
  app.addHook('onClose', async () => {
    await orm.close(true)
    if (ownEmbedded) await embedded!.stop()
  })
  const applied = await syncSchema(orm, app.config.modulesFile, embedded === undefined)
  if (applied.length > 0) app.log.info({ statements: applied.length }, 'database schema updated from modules.yaml')
  app.decorate('orm', orm)
  app.decorate('entities', entities)
  app.decorate('databaseKind', embedded === undefined ? 'postgresql' : 'embedded')
  app.decorateRequest('em', null as unknown as EntityManager)
  app.addHook('onRequest', async (request) => {
    request.em = orm.em.fork()
  })
}

export default fp(ormPlugin, { name: 'policia-orm', fastify: '5.x', dependencies: ['policia-config'] })
