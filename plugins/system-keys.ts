/**
 * Decorates the app with the field cipher, keyed by ENCRYPTION_KEY(S) and the
 * system keys of db/system-keys.ts, and with the checkpoint signer (the
 * `firma` system key, records/integrity/checkpoints.ts). Before the app serves, blind
 * indexes stored under the old single index key are rebuilt once
 * (records/integrity/blind-index-upgrade.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createFieldCipher, type FieldCipher } from '../core/crypto.js'
import { loadSystemKeys } from '../db/system-keys.js'
import { upgradeBlindIndexes } from '../records/integrity/blind-index-upgrade.js'
import { createSigner, type Signer } from '../records/integrity/checkpoint-format.js'

declare module 'fastify' {
  interface FastifyInstance {
    cipher: FieldCipher
    signer: Signer
  }
}

async function systemKeysPlugin (app: FastifyInstance): Promise<void> {
  const keys = await loadSystemKeys(app.orm.em.fork(), app.config.encryptionKeys)
  const cipher = createFieldCipher(app.config.encryptionKeys, keys)
  const upgraded = await upgradeBlindIndexes(app.orm.em, app.registry, cipher, app.config.encryptionKeys, { lock: app.databaseKind === 'postgresql' })
  if (upgraded !== undefined) app.log.info({ tables: upgraded }, 'blind indexes rebuilt with one key per field (scheme 2 now in force)')
  app.decorate('cipher', cipher)
  app.decorate('signer', createSigner(keys.signingSeed))
}

export default fp(systemKeysPlugin, { name: 'policia-system-keys', fastify: '5.x', dependencies: ['policia-orm'] })
