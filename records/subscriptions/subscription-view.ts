/**
 * What a subscription receives of one feed entry (docs/user-guide.md
 * "Webhooks (suscripciones)"): nothing when its `tipos` or `filtro` leave
 * the entry out or its role may not see the record as written; else the
 * event as that role sees it (RecordsService.events: encrypted values as
 * `descifrar` reaches, each decrypted value logged in the read log as a
 * read by the subscription).
 */
import type { Db } from '../../db/statement.js'
import type { FieldCipher } from '../../core/crypto.js'
import type { Registry } from '../../core/registry/types.js'
import type { RowPredicate } from '../events/row-filter.js'
import { EVENT_KINDS, type FeedEntry } from '../events/feed.js'
import type { FeedEvent } from '../events/event-view.js'
import type { RecordsLayer } from '../records-layer.js'
import { subscriberOf, type Subscription } from './subscription.js'
import { parseFilter } from './subscription-filter.js'

export interface SubscriptionViewDeps {
  readonly records: RecordsLayer
  readonly registry: Registry
  readonly cipher: FieldCipher
  readonly timeZone: string
}

export type SubscriptionView = (em: Db, sub: Subscription, entry: FeedEntry) => Promise<FeedEvent | undefined>

/** The route the read log names for a delivery: the target, less its query (it may hold a token). */
export function deliveryRoute (url: string): string {
  const u = new URL(url)
  return `WEBHOOK ${u.origin}${u.pathname}`.slice(0, 200)
}

export function subscriptionView (deps: SubscriptionViewDeps): SubscriptionView {
  /** Parsed filters by subscription, while its `filtro` stays the same. */
  const filters = new Map<string, { filtro: string, passes: RowPredicate }>()
  return async (em, sub, entry) => {
    if (sub.tipos.length > 0 && !sub.tipos.includes(`${entry.modulo}.${EVENT_KINDS[entry.accion]}`)) return undefined
    const mod = deps.registry.byName.get(entry.modulo)
    if (mod === undefined) return undefined
    if (sub.filtro !== null) {
      let f = filters.get(sub.id)
      if (f?.filtro !== sub.filtro) {
        f = { filtro: sub.filtro, passes: parseFilter(mod, sub.filtro, deps.timeZone, deps.cipher) }
        filters.set(sub.id, f)
      }
      if (!f.passes(entry.datos)) return undefined
    }
    const records = deps.records.forRequest({ em, reads: em, caller: subscriberOf(sub), route: () => deliveryRoute(sub.url) })
    const [event] = await records.of(mod).events([entry])
    return event
  }
}
