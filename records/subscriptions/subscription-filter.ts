/**
 * A subscription's `filtro` (docs/user-guide.md "Webhooks (suscripciones)"):
 * a list query string of one module, checked when the subscription is
 * written and judged on each event's record as written (the version's
 * stored row, not today's), deleted ones included. The same filters as a
 * live stream of one module take, evaluated the same way, in memory
 * (records/events/stream-query.ts `streamFilter`): no query per event, and
 * the same refusals (a text search only the database answers; a filter on
 * an encrypted field, a standing probe for a person).
 */
import type { FieldCipher } from '../../core/crypto.js'
import { AppError, invalid } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { LIST_PARAMETERS } from '../list-query.js'
import type { RowPredicate } from '../events/row-filter.js'
import { streamFilter } from '../events/stream-query.js'

/** The predicate of `filtro` on `mod`; a 400 naming `filtro` when it is no filter a subscription takes. */
export function parseFilter (mod: ModuleDef, filtro: string, timeZone: string, cipher: FieldCipher): RowPredicate {
  const query: Record<string, string | string[]> = {}
  for (const [k, v] of new URLSearchParams(filtro)) {
    if (LIST_PARAMETERS.includes(k)) throw invalid('filtro', `"${k}" no es un filtro: una suscripción recibe cada evento que el filtro admite`)
    const had = query[k]
    query[k] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v]
  }
  try {
    return streamFilter(mod, query, timeZone, cipher)
  } catch (err) {
    const detail = err instanceof AppError ? err.detalles?.[0] : undefined
    throw detail === undefined ? err : invalid('filtro', `${detail.campo}: ${detail.mensaje.replace('un flujo de eventos', 'una suscripción')}`)
  }
}
