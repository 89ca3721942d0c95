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

async function recordsPlugin (app: FastifyInstance): Promise<void> {
  const records = new RecordsLayer({
    registry: app.registry,
    access: app.access,
    cipher: app.cipher,
    sequences: app.stores.sequences,
    timeZone: app.config.timeZone,
    checkpoints: app.checkpoints,
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
      const request = this
      this.callerRecords ??= records.forRequest({
        get em () { return request.em },
        reads: app.orm.em,
        caller: this.caller,
        route: () => `${request.method} ${request.routeOptions.url ?? request.url}`,
      })
      return this.callerRecords
    },
  })
}

export default fp(recordsPlugin, { name: 'policia-records', fastify: '5.x', dependencies: ['policia-config', 'policia-stores', 'policia-system-keys', 'policia-orm', 'policia-checkpoints', 'policia-files', 'policia-metrics'] })
