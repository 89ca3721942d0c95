/**
 * Webhooks (docs/user-guide.md "Webhooks (suscripciones)"; docs/operator-guide.md
 * "Webhooks"): when modules.yaml declares a subscriptions module, its policy
 * joins the records hook bus and this instance runs a deliverer
 * (`app.webhooks`, records/subscriptions/deliverer.ts) that takes leases on
 * subscriptions and POSTs their events, woken by the feed hub (`app.feed`).
 * A write of a subscription anywhere makes every instance look for leases
 * at once (a signal through the stores).
 */
import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { FastifyInstance } from 'fastify'
import { Deliverer } from '../records/subscriptions/deliverer.js'
import { subscribeSubscriptionsPolicy } from '../records/subscriptions/subscriptions-policy.js'
import { subscriptionView } from '../records/subscriptions/subscription-view.js'
import { feedHead, readFeed } from '../records/events/feed.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's webhook deliverer; absent when modules.yaml declares no subscriptions module. */
    webhooks: Deliverer
  }
}

const CHANGED = 'suscripciones:cambio'

async function webhooksPlugin (app: FastifyInstance): Promise<void> {
  const mod = app.registry.subscriptionsModule
  if (mod === undefined) return
  const { webhooks, timeZone } = app.config
  const view = subscriptionView({ records: app.records, registry: app.registry, cipher: app.cipher, timeZone })
  const deliverer = new Deliverer({
    module: mod,
    // Host and pid first: an operator (and the fault test) can tell which process holds a lease.
    instance: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    ...webhooks,
    fork: () => app.orm.em.fork(),
    read: readFeed,
    head: feedHead,
    view,
    secret: (state) => app.cipher.decrypt(state.secreto, state.suscripcion, 'secreto'),
    // Woken only: the deliverer reads from its subscription's own position (records/events/feed-hub.ts `onAdvance`).
    listen: async (fn) => app.feed.onAdvance(fn),
    onAttempt: (resultado) => { app.countDelivery(resultado) },
    announce: () => { void app.stores.signals.publish(CHANGED, '') },
    onProblem: (message, err) => { app.log.warn({ err }, message) },
  })
  subscribeSubscriptionsPolicy(app.records.hooks, mod, {
    registry: app.registry,
    cipher: app.cipher,
    timeZone,
    allowPrivate: webhooks.allowPrivate,
    changed: () => { deliverer.announce() },
  })
  app.decorate('webhooks', deliverer)
  // WEBHOOK_DELIVERY=false: an instance that serves requests only and leaves delivery to the others
  // (docs/operator-guide.md "Webhooks"); its writes of subscriptions still wake them.
  if (!webhooks.deliver) return
  const unsubscribe = await app.stores.signals.subscribe(CHANGED, () => { deliverer.tick() })
  app.addHook('onReady', async () => { deliverer.start() })
  app.addHook('onClose', async () => {
    unsubscribe()
    await deliverer.close()
  })
}

export default fp(webhooksPlugin, { name: 'policia-webhooks', fastify: '5.x', dependencies: ['policia-events', 'policia-records', 'policia-stores', 'policia-orm'] })
