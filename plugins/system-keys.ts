/** Decorates the app with the field cipher, keyed by ENCRYPTION_KEY(S) and the system keys of db/system-keys.ts. */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createFieldCipher, type FieldCipher } from '../core/crypto.js'
import { loadSystemKeys } from '../db/system-keys.js'

declare module 'fastify' {
  interface FastifyInstance {
    cipher: FieldCipher
  }
}

async function systemKeysPlugin (app: FastifyInstance): Promise<void> {
  const macKeys = await loadSystemKeys(app.orm.em.fork(), app.config.encryptionKeys)
  app.decorate('cipher', createFieldCipher(app.config.encryptionKeys, macKeys))
}

export default fp(systemKeysPlugin, { name: 'policia-system-keys', fastify: '5.x', dependencies: ['policia-orm'] })
