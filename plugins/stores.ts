/**
 * Decorates the app with its stores (stores/factory.ts): Redis when
 * REDIS_URL is set, otherwise in-process. Tests may hand in stores so that
 * two instances in one process share them the way two processes share Redis.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createStores, type Stores } from '../stores/factory.js'
import { admitFor } from '../stores/admission.js'

export type { Stores } from '../stores/factory.js'

declare module 'fastify' {
  interface FastifyInstance {
    stores: Stores
  }
}

export interface StoresOptions {
  stores?: Omit<Stores, 'kind' | 'admit'>
}

async function storesPlugin (app: FastifyInstance, opts: StoresOptions): Promise<void> {
  const redis = app.hasDecorator('redis') ? app.redis : undefined
  const stores: Stores = opts.stores !== undefined
    ? { ...opts.stores, admit: admitFor(opts.stores.rateLimits, opts.stores.sessions), kind: redis !== undefined ? 'redis' : 'memory' }
    : createStores(redis, app.config.redisPrefix)
  app.decorate('stores', Object.freeze(stores))
}

export default fp(storesPlugin, { name: 'policia-stores', fastify: '5.x', dependencies: ['policia-config', 'policia-redis'] })
