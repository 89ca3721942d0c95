/**
 * Decorates the app with the field cipher, keyed by ENCRYPTION_KEY(S) and the
 * system keys of db/system-keys.ts, and with the checkpoint signer (the
 * `firma` system key, records/checkpoints.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createFieldCipher, type FieldCipher } from '../core/crypto.js'
import { loadSystemKeys } from '../db/system-keys.js'
import { createSigner, type Signer } from '../records/checkpoint-format.js'

declare module 'fastify' {
  interface FastifyInstance {
    cipher: FieldCipher
    signer: Signer
  }
}

async function systemKeysPlugin (app: FastifyInstance): Promise<void> {
  const keys = await loadSystemKeys(app.orm.em.fork(), app.config.encryptionKeys)
  app.decorate('cipher', createFieldCipher(app.config.encryptionKeys, keys))
  app.decorate('signer', createSigner(keys.signingSeed))
}

export default fp(systemKeysPlugin, { name: 'policia-system-keys', fastify: '5.x', dependencies: ['policia-orm'] })
