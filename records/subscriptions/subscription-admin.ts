/**
 * What an administrator asks of a subscription's delivery
 * (docs/user-guide.md "Webhooks (suscripciones)"): its attempts
 * (`entregas`), and the two moves of its state, `reanudar` (resume one
 * paused as failing) and `reproducir` (deliver again from a position).
 * The caller's records service answers who may (`ver` for the attempts,
 * `editar` for a move: 403, or 404 for a subscription they cannot see);
 * the state itself is no record write (db/delivery-statements.ts).
 */
import type { Db } from '../../db/statement.js'
import { invalid } from '../../core/errors.js'
import { formatDateTime } from '../../core/time.js'
import type { RecordsService } from '../records-service.js'
import { parsePage } from '../list-query.js'
import { listAttempts, readState, replay, resume, type DeliveryState } from '../../db/delivery-statements.js'

/** A subscription's delivery state as the API shows it. */
export interface StateView {
  posicion: number
  pausada: boolean
  fallando_desde: string | null
  intentos: number
  proximo_intento: string | null
}

export function stateView (s: DeliveryState | undefined, timeZone: string): StateView {
  const at = (d: Date | null | undefined): string | null => d === null || d === undefined ? null : formatDateTime(d, timeZone)
  return { posicion: s?.posicion ?? 0, pausada: s?.pausada ?? false, fallando_desde: at(s?.fallandoDesde), intentos: s?.intentos ?? 0, proximo_intento: at(s?.proximoIntento) }
}

/** The state and a page of the attempts, newest first. */
export async function deliveries (service: RecordsService, em: Db, id: string, query: Record<string, string | string[] | undefined>, timeZone: string) {
  await service.get(id)
  const { limit, offset } = parsePage(query)
  const { total, rows } = await listAttempts(em, id, limit, offset)
  return {
    estado: stateView(await readState(em, id), timeZone),
    entregas: rows.map((r) => ({ fecha: formatDateTime(r.fecha, timeZone), posicion: r.posicion, estado: r.estado ?? null, latencia_ms: r.latencia_ms, error: r.error ?? null, resultado: r.resultado })),
    total,
    limit,
    offset,
  }
}

/** Resumes a paused subscription; its failing event is tried again at once. */
export async function resumeDelivery (service: RecordsService, em: Db, id: string, timeZone: string): Promise<StateView> {
  await service.target(id, 'editar')
  await resume(em, id)
  return stateView(await readState(em, id), timeZone)
}

/** Delivers again every covered event from `desde` on (and resumes a paused subscription). */
export async function replayDelivery (service: RecordsService, em: Db, id: string, desde: unknown, timeZone: string): Promise<StateView> {
  if (typeof desde !== 'number' || !Number.isInteger(desde) || desde < 1) throw invalid('desde', 'debe ser una posición del flujo de eventos (un entero mayor o igual que 1)')
  await service.target(id, 'editar')
  await replay(em, id, desde)
  return stateView(await readState(em, id), timeZone)
}
