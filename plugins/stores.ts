/**
 * Decorates the app with its stores (stores/factory.ts): Redis when
 * REDIS_URL is set, otherwise in-process. Tests may hand in any of them so
 * that two instances in one process share them the way two processes share
 * Redis; the factory builds the rest.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createStores, type StoreSet, type Stores } from '../stores/factory.js'

export type { Stores } from '../stores/factory.js'

declare module 'fastify' {
  interface FastifyInstance {
    stores: Stores
  }
}

export interface StoresOptions {
  stores?: Partial<StoreSet>
}

async function storesPlugin (app: FastifyInstance, opts: StoresOptions): Promise<void> {
  const redis = app.hasDecorator('redis') ? app.redis : undefined
  const stores = Object.freeze(createStores(redis, app.config.redisPrefix, opts.stores))
  app.decorate('stores', stores)
  // Only a store this instance made is its to close (tests share one between instances).
  if (opts.stores?.signals === undefined) app.addHook('onClose', async () => { await stores.signals.close() })
  app.addHook('onClose', async () => { await stores.close() })
}

export default fp(storesPlugin, { name: 'policia-stores', fastify: '5.x', dependencies: ['policia-config', 'policia-redis'] })
