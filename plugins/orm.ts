/**
 * The ORM as a Fastify plugin: opens the database (db/open.ts), brings its
 * schema in line with modules.yaml, gives every request an EntityManager
 * of its own (forked on first use: a request that only reads through
 * direct SQL never needs one) and closes everything in onClose. On the
 * embedded database it also runs autovacuum's job (db/embedded-maintenance.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { EntitySchema } from '@mikro-orm/core'
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql'
import type { Row } from '../db/module-entity.js'
import { openDatabase, type OrmOptions } from '../db/open.js'
import { droppedIndexes, syncSchema } from '../db/schema-sync.js'
import { startEmbeddedMaintenance, type EmbeddedMaintenance, type MaintenanceSettings } from '../db/embedded-maintenance.js'

export type { OrmOptions } from '../db/open.js'

export interface OrmPluginOptions extends OrmOptions {
  /**
   * The embedded database's vacuum and analyze rounds (db/embedded-maintenance.ts):
   * other settings (tests), or false for none. Nothing runs on PostgreSQL, whose autovacuum does this.
   */
  maintenance?: Partial<MaintenanceSettings> | false
}

declare module 'fastify' {
  interface FastifyInstance {
    orm: MikroORM
    /** EntitySchema of each module, by module name. */
    entities: ReadonlyMap<string, EntitySchema<Row>>
    /** 'postgresql' or 'embedded'. */
    databaseKind: 'postgresql' | 'embedded'
  }
  interface FastifyRequest {
    /** The request's own EntityManager, forked from the app's on first use. */
    readonly em: EntityManager
    forkedEm: EntityManager | null
  }
}

async function ormPlugin (app: FastifyInstance, opts: OrmPluginOptions): Promise<void> {
  const db = await openDatabase(app.config, app.registry, app.log, opts)
  const { orm, entities } = db
  app.addHook('onClose', async () => { await db.close() })
  if (db.kind === 'embedded' && opts.maintenance !== false) {
    const settings = opts.maintenance ?? {}
    // Rounds from when the app is ready; stopped (a running VACUUM awaited) as closing begins, so none starts while requests drain.
    let maintenance: EmbeddedMaintenance | undefined
    app.addHook('onReady', async () => { maintenance = startEmbeddedMaintenance(orm.em.getConnection(), app.log, settings) })
    app.addHook('preClose', async () => { await maintenance?.stop() })
  }
  const applied = await syncSchema(orm, app.config.modulesFile, db.kind, app.registry.modules)
  if (applied.length > 0) app.log.info({ statements: applied.length }, 'database schema updated from modules.yaml')
  const dropped = droppedIndexes(applied)
  if (dropped.length > 0) app.log.info({ indexes: dropped }, 'dropped the indexes modules.yaml no longer asks for (docs/administrator-guide.md "Indexes")')
  app.decorate('orm', orm)
  app.decorate('entities', entities)
  app.decorate('databaseKind', db.kind)
  app.decorateRequest('forkedEm', null)
  app.decorateRequest('em', {
    getter (this: FastifyRequest): EntityManager {
      return this.forkedEm ??= orm.em.fork()
    },
  })
}

export default fp(ormPlugin, { name: 'policia-orm', fastify: '5.x', dependencies: ['policia-config'] })
