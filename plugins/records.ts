/**
 * Decorates the app with the records layer (`app.records`, a RecordsLayer)
 * and every request with its caller's records (`request.records`, a
 * CallerRecords built on first use from the request's EntityManager, caller
 * and route). Subscribes the users module's policy to the hook bus.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CallerRecords } from '../records/caller-records.js'
import { RecordsLayer } from '../records/records-layer.js'
import { createFileCipher } from '../core/file-cipher.js'
import { subscribeUsersPolicy } from '../records/users/users-policy.js'
import type { RequestContext } from '../records/records-service.js'
import type { Caller } from '../core/access.js'
import type { Db } from '../db/statement.js'

declare module 'fastify' {
  interface FastifyInstance {
    records: RecordsLayer
  }
  interface FastifyRequest {
    /** Every module's records as this request's caller may see them. */
    readonly records: CallerRecords
    callerRecords: CallerRecords | null
  }
}

/**
 * What a request's records know of it. A class, not an object literal with
 * a getter: V8 builds such a literal through its runtime, on every request
 * (docs/performance.md "A create runs cold").
 */
class RecordsContext implements RequestContext {
  readonly caller: Caller
  constructor (private readonly request: FastifyRequest, readonly reads: Db) {
    this.caller = request.caller
  }

  /** Forked on first use (plugins/orm.ts): a request that only reads never forks one. */
  get em (): Db { return this.request.em }

  route (): string { return `${this.request.method} ${this.request.routeOptions.url ?? this.request.url}` }
}

async function recordsPlugin (app: FastifyInstance): Promise<void> {
  const records = new RecordsLayer({
    registry: app.registry,
    access: app.access,
    cipher: app.cipher,
    sequences: app.stores.sequences,
    timeZone: app.config.timeZone,
    checkpoints: app.checkpoints,
    connections: app.orm.config.get('pool')?.max,
    files: {
      store: app.files,
      cipher: createFileCipher(app.config.encryptionKeys),
      maxBytes: app.config.files.maxBytes,
      // Tampering (docs/operator-guide.md "Evidence files"): names and hashes only, no personal data.
      onAltered: (a) => {
        app.log.error({ module: a.module, record: a.record, field: a.field, file: a.file, expected: a.expected, found: a.found }, 'evidence file altered: its stored bytes do not match the SHA-256 its record seals; not served')
        app.countAlteredFile(a.module)
      },
    },
  })
  subscribeUsersPolicy(records.hooks, app.registry.usersModule, app.access, app.stores.sessions)
  app.decorate('records', records)
  app.decorateRequest('callerRecords', null)
  app.decorateRequest('records', {
    getter (this: FastifyRequest): CallerRecords {
      this.callerRecords ??= records.forRequest(new RecordsContext(this, app.orm.em))
      return this.callerRecords
    },
  })
}

export default fp(recordsPlugin, { name: 'policia-records', fastify: '5.x', dependencies: ['policia-config', 'policia-stores', 'policia-system-keys', 'policia-orm', 'policia-checkpoints', 'policia-files', 'policia-metrics'] })
