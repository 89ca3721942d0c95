/**
 * Decorates the app with the evidence files' store (`app.files`,
 * stores/files/): FILES_DIR, or the S3-compatible bucket of FILES_S3_*.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { FileStore } from '../stores/files/contract.js'
import { createFileStore } from '../stores/files/factory.js'

declare module 'fastify' {
  interface FastifyInstance {
    files: FileStore
  }
}

async function filesPlugin (app: FastifyInstance): Promise<void> {
  const store = createFileStore(app.config)
  app.log.debug({ archivos: store.describe() }, 'evidence files store')
  app.decorate('files', store)
  app.addHook('onClose', async () => { store.close?.() })
}

export default fp(filesPlugin, { name: 'policia-files', fastify: '5.x', dependencies: ['policia-config'] })
