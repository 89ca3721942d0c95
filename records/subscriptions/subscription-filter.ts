/**
 * A subscription's `filtro` (docs/user-guide.md "Webhooks (suscripciones)"):
 * a list query string of one module (records/list-query.ts), checked when
 * the subscription is written and judged on each event's record as
 * written (the version's stored row, not today's), deleted ones included.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { FieldCipher } from '../../core/crypto.js'
import { AppError, invalid } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import type { Row } from '../../db/module-entity.js'
import { serviceConnection } from '../../db/row-query.js'
import { whereSql, type Where } from '../../db/where-sql.js'
import { LIST_PARAMETERS, parseListQuery } from '../list-query.js'

/** The filter of `filtro` on `mod`; a 400 naming `filtro` when it is no list filter. */
export function parseFilter (mod: ModuleDef, filtro: string, timeZone: string, cipher: FieldCipher): Where {
  const query: Record<string, string | string[]> = {}
  for (const [k, v] of new URLSearchParams(filtro)) {
    if (LIST_PARAMETERS.includes(k)) throw invalid('filtro', `"${k}" no es un filtro: una suscripción recibe cada evento que el filtro admite`)
    const had = query[k]
    query[k] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v]
  }
  let parsed
  try {
    parsed = parseListQuery(mod, { ...query, incluir_eliminados: 'true' }, timeZone, cipher)
  } catch (err) {
    const detail = err instanceof AppError ? err.detalles?.[0] : undefined
    throw detail === undefined ? err : invalid('filtro', `${detail.campo}: ${detail.mensaje}`)
  }
  if (parsed.search.length > 0) throw invalid('filtro', 'la búsqueda de texto (q, contiene en textos) no se admite en el filtro de una suscripción')
  return parsed.where
}

/** Whether the stored row `datos` of `mod` passes `where` (judged by PostgreSQL, as a list would). */
export async function passes (em: EntityManager, mod: ModuleDef, where: Where, datos: Row): Promise<boolean> {
  const params: unknown[] = [JSON.stringify(datos)]
  const cond = whereSql(where, params)
  const rows = await serviceConnection(em).rows(`select 1 as ok from jsonb_populate_record(null::"${mod.table}", $1::jsonb) as t where ${cond}`, params)
  return rows.length > 0
}
