/**
 * The event feed as this instance follows it (`app.feed`,
 * records/events/feed-hub.ts; docs/architecture.md "Events"): every write
 * that commits here tells the other instances, the chain is sealed
 * promptly while anyone listens, and live streams and webhook deliverers
 * subscribe here. Signals travel through the stores (Redis pub/sub, or in
 * process in embedded mode).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { FeedHub } from '../records/events/feed-hub.js'
import { feedHead, readFeed } from '../records/events/feed.js'

declare module 'fastify' {
  interface FastifyInstance {
    feed: FeedHub
  }
}

async function eventsPlugin (app: FastifyInstance): Promise<void> {
  const hub = new FeedHub({
    signals: app.stores.signals,
    read: async (after, limit) => readFeed(app.orm.em.fork(), after, limit),
    head: async () => feedHead(app.orm.em.fork()),
    seal: async () => {
      const result = await app.checkpoints.sealNow(app.orm.em.fork())
      const sealed = result?.sealed ?? 0
      app.countEvents(sealed)
      return { sealed, behind: result?.behind ?? false }
    },
    onProblem: (message, err) => { app.log.warn({ err }, message) },
    writeSealMs: app.config.chainSealDelayMs,
  })
  await hub.start()
  app.checkpoints.onSealed = (result) => { hub.sealed(); app.countEvents(result.sealed) }
  app.records.hooks.on('*', 'after', () => { hub.written() })
  app.decorate('feed', hub)
  app.addHook('onClose', async () => { await hub.close() })
}

export default fp(eventsPlugin, { name: 'policia-events', fastify: '5.x', dependencies: ['policia-stores', 'policia-orm', 'policia-checkpoints', 'policia-records'] })
