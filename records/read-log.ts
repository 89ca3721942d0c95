/**
 * The read log (SPEC S7): every response that carried decrypted sensitive
 * fields leaves one row per record — who, when, which module, record and
 * fields — written before the response is sent. Queryable by superadmins
 * (holders of `*.*`) at GET /auditoria/lecturas: filters usuario, modulo,
 * registro (exact), desde/hasta (date-times in the service zone, both
 * inclusive to the second); limit/offset as in every list; newest first.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { invalid } from '../core/errors.js'
import { hint } from '../core/registry/suggest.js'
import { isCleanText } from '../core/text.js'
import { formatDateTime, parseDateTime } from '../core/time.js'
import { ReadLogEntity, type ReadLogRow } from '../db/read-log-entity.js'
import { parsePage } from './list-query.js'

export async function logReads (em: EntityManager, entries: ReadLogRow[]): Promise<void> {
  if (entries.length > 0) await em.insertMany(ReadLogEntity, entries)
}

export interface ReadLogView {
  usuario: string
  fecha: string
  modulo: string
  registro: string
  campos: string[]
  ruta: string
}

const PARAMS = ['usuario', 'modulo', 'registro', 'desde', 'hasta', 'limit', 'offset']

function text (query: Record<string, unknown>, key: string): string | undefined {
  const v = query[key]
  if (v === undefined) return undefined
  if (typeof v !== 'string' || !isCleanText(v) || v.length > 200) throw invalid(key, 'valor no válido')
  return v
}

/** One page of the read log; any parameter it does not know is a 400 naming it. */
export async function listReads (em: EntityManager, query: Record<string, unknown>, timeZone: string): Promise<{ records: ReadLogView[], total: number, limit: number, offset: number }> {
  for (const key of Object.keys(query)) {
    if (!PARAMS.includes(key)) throw invalid(key, `parámetro desconocido${hint(key, PARAMS)}`)
  }
  const where: Record<string, unknown> = {}
  for (const key of ['usuario', 'modulo', 'registro'] as const) {
    const v = text(query, key)
    if (v !== undefined) where[key] = v
  }
  const range: Record<string, Date> = {}
  // Both ends inclusive, to the second shown: `hasta` takes in its whole second.
  for (const [key, op] of [['desde', '$gte'], ['hasta', '$lt']] as const) {
    const v = text(query, key)
    if (v === undefined) continue
    const d = parseDateTime(v, timeZone)
    if (d === null) throw invalid(key, "debe ser una fecha y hora 'YYYY-MM-DD HH:MM:SS'")
    range[op] = op === '$lt' ? new Date(d.getTime() + 1000) : d
  }
  if (Object.keys(range).length > 0) where.fecha = range
  const { limit, offset } = parsePage(query as Record<string, string | string[]>)
  const [rows, total] = await em.findAndCount(ReadLogEntity, where, { orderBy: [{ fecha: 'desc' }, { id: 'desc' }], limit, offset })
  const records = rows.map((r: ReadLogRow) => ({ usuario: r.usuario, fecha: formatDateTime(new Date(r.fecha), timeZone), modulo: r.modulo, registro: r.registro, campos: r.campos, ruta: r.ruta }))
  return { records, total, limit, offset }
}
