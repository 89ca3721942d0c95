/**
 * An entry of the feed as one receiver sees it (docs/user-guide.md
 * "Events"): the event's own fields, the changed fields less the encrypted
 * ones it may not read (as the history shows them), and the record as the
 * receiver may see it (`registro`, `_restringidos` as in a GET). Pure.
 */
import { formatDateTime } from '../../core/time.js'
import { EVENT_KINDS, type FeedEntry } from './feed.js'

export interface FeedEvent {
  posicion: number
  /** `<module>.creado`, `.actualizado`, `.eliminado`, `.restaurado` or `.suprimido`. */
  tipo: string
  modulo: string
  registro_id: string
  version: number
  /** When the write was made, in the service time zone. */
  fecha: string
  usuario: string
  campos_cambiados: string[]
  /** The version's `_hash` (the record's hash chain, and the global chain's entry). */
  hash: string
  registro: Record<string, unknown>
}

/** The event of `entry` with its record already viewed; `hidden`: encrypted fields the receiver may not read. */
export function eventOf (entry: FeedEntry, registro: Record<string, unknown>, timeZone: string, hidden?: ReadonlySet<string>): FeedEvent {
  return {
    posicion: entry.posicion,
    tipo: `${entry.modulo}.${EVENT_KINDS[entry.accion]}`,
    modulo: entry.modulo,
    registro_id: entry.registro,
    version: entry.version,
    fecha: formatDateTime(entry.fecha, timeZone),
    usuario: entry.usuario,
    campos_cambiados: hidden === undefined ? entry.campos : entry.campos.filter((c) => !hidden.has(c)),
    hash: entry.hash,
    registro,
  }
}
