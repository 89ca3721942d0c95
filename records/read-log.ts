/**
 * The read log (docs/operator-guide.md "Read log"): every response that carried decrypted
 * sensitive fields leaves one row per record (`lectura`) — who, when, which
 * module, record and fields — and every list filtered on an encrypted field
 * one row (`busqueda`) — who, when, module, the fields filtered on and the
 * number of matches, never the value — and every export that lets
 * decrypted values out one row (`exportar`) with its filter, besides its
 * records' `lectura` rows — and every printed copy one row (`documento`), the
 * decrypted fields it printed in `campos` — written before the values are sent. Queryable by superadmins (holders of `*.*`) at GET
 * /auditoria/lecturas: filters tipo, usuario, modulo, registro (exact),
 * desde/hasta (date-times in the service zone, both inclusive to the
 * second); limit/offset as in every list; newest first.
 */
import type { Db } from '../db/statement.js'
import { invalid } from '../core/errors.js'
import { apiHint } from '../core/registry/suggest.js'
import { isCleanText } from '../core/text.js'
import { formatDateTime, parseDateTime } from '../core/time.js'
import type { ReadLogKind, ReadLogRow } from '../db/read-log-entity.js'
import { appendReadLog, readLogPage, type ReadLogFilter } from '../db/read-log-statements.js'
import { parsePage } from './list-query.js'

export async function logReads (em: Db, entries: ReadLogRow[]): Promise<void> {
  await appendReadLog(em, entries)
}

export interface ReadLogView {
  tipo: ReadLogKind
  usuario: string
  fecha: string
  modulo: string
  /** The record read; null for a `busqueda`. */
  registro: string | null
  campos: string[]
  ruta: string
  /** Only for a `busqueda`: how many records matched. */
  coincidencias?: number
  /** Only for an `exportar`: the export's query string, values of encrypted filters masked. */
  filtro?: string
  /** Only for a `descarga` or `acceso`: the evidence file's id. */
  archivo?: string
}

const PARAMS = ['tipo', 'usuario', 'modulo', 'registro', 'desde', 'hasta', 'limit', 'offset']
export const READ_LOG_KINDS: readonly ReadLogKind[] = ['lectura', 'busqueda', 'exportar', 'descarga', 'acceso', 'documento', 'interesado', 'bloqueado']
const KINDS = READ_LOG_KINDS
const ON_A_RECORD: ReadonlySet<ReadLogKind> = new Set(['lectura', 'descarga', 'acceso', 'documento'])

function view (r: ReadLogRow, timeZone: string): ReadLogView {
  const tipo = r.tipo ?? 'lectura'
  return {
    tipo,
    usuario: r.usuario,
    fecha: formatDateTime(new Date(r.fecha), timeZone),
    modulo: r.modulo,
    registro: ON_A_RECORD.has(tipo) ? r.registro : null,
    campos: r.campos,
    ruta: r.ruta,
    ...((tipo === 'busqueda' || tipo === 'interesado') && { coincidencias: r.coincidencias ?? 0 }),
    ...(tipo === 'exportar' && { filtro: r.filtro ?? '' }),
    ...((tipo === 'descarga' || tipo === 'acceso') && { archivo: r.filtro ?? '' }),
  }
}

function text (query: Record<string, unknown>, key: string): string | undefined {
  const v = query[key]
  if (v === undefined) return undefined
  if (typeof v !== 'string' || !isCleanText(v) || v.length > 200) throw invalid(key, 'valor no válido')
  return v
}

/** One page of the read log; any parameter it does not know is a 400 naming it. */
export async function listReads (em: Db, query: Record<string, unknown>, timeZone: string): Promise<{ records: ReadLogView[], total: number, limit: number, offset: number }> {
  for (const key of Object.keys(query)) {
    if (!PARAMS.includes(key)) throw invalid(key, `parámetro desconocido${apiHint(key, PARAMS)}`)
  }
  const where: ReadLogFilter = {}
  for (const key of ['usuario', 'modulo', 'registro'] as const) {
    const v = text(query, key)
    if (v !== undefined) where[key] = v
  }
  const tipo = text(query, 'tipo')
  if (tipo !== undefined) {
    if (!(KINDS as readonly string[]).includes(tipo)) throw invalid('tipo', `debe ser ${KINDS.join(', ')}`)
    where.tipo = tipo as ReadLogKind
  }
  // Both ends inclusive, to the second shown: `hasta` takes in its whole second.
  for (const key of ['desde', 'hasta'] as const) {
    const v = text(query, key)
    if (v === undefined) continue
    const d = parseDateTime(v, timeZone)
    if (d === null) throw invalid(key, "debe ser una fecha y hora 'YYYY-MM-DD HH:MM:SS'")
    if (key === 'desde') where.since = d
    else where.before = new Date(d.getTime() + 1000)
  }
  const { limit, offset } = parsePage(query as Record<string, string | string[]>)
  const [rows, total] = await readLogPage(em, where, limit, offset)
  return { records: rows.map((r: ReadLogRow) => view(r, timeZone)), total, limit, offset }
}

/** The latest `limit` entries of the log on one record, newest first, and how many it holds (a person's data, records/data-protection/). */
export async function readsOfRecord (em: Db, modulo: string, registro: string, limit: number, timeZone: string): Promise<{ total: number, records: ReadLogView[] }> {
  const [rows, total] = await readLogPage(em, { modulo, registro }, limit, 0)
  return { total, records: rows.map((r) => view(r, timeZone)) }
}
