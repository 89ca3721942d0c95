/**
 * The statements of the event feed (records/events/feed.ts): the global
 * chain (`sys_cadena`) joined to the history (`sys_historial`), read by
 * position. Nothing is stored for the feed itself.
 */
import type { HistoryAction } from './history-entity.js'
import { BLOCKED_COLUMN } from './columns.js'
import { entityName, type Row } from './module-entity.js'
import { findRows } from './row-query.js'
import { queryRows, type Db } from './statement.js'

/** One chain entry with its history entry: a sealed version and its position (`seq`). */
export interface ChainedEntry {
  readonly seq: number
  readonly modulo: string
  readonly registro: string
  readonly version: number
  readonly accion: HistoryAction
  readonly usuario: string
  readonly fecha: Date
  /** Declared fields whose value this version changed. */
  readonly campos: string[]
  /** The version's `_hash`. */
  readonly hash: string
  /** The version's stored row; null when the database holds it in the live row (its newest version) or nowhere. */
  readonly datos: Row | null
}

interface Stored {
  seq: string
  modulo: string
  registro: string
  version: number
  accion: HistoryAction
  usuario: string
  fecha: Date | string
  campos: string[] | string
  hash: string
  datos: Row | string | null
}

const json = <T>(v: T | string): T => typeof v === 'string' ? JSON.parse(v) as T : v

/**
 * Up to `limit` chain entries after position `after`, oldest first; with
 * `modulos`, only theirs. A version's stored row is its entry's own (older
 * entries) or the next entry's `anterior`.
 */
export async function chainEntriesAfter (db: Db, after: number, limit: number, modulos?: readonly string[]): Promise<ChainedEntry[]> {
  const only = modulos === undefined ? '' : ` and c.modulo in (${modulos.map(() => '?').join(', ')})`
  const rows = await queryRows<Stored>(db,
    `select c.seq::text as seq, h.modulo, h.registro, h.version, h.accion, h.usuario, h.fecha, h.campos, h.hash, coalesce(h.datos, n.anterior) as datos
       from sys_cadena c join sys_historial h on h.id = c.historial
       left join sys_historial n on n.modulo = h.modulo and n.registro = h.registro and n.version = h.version + 1
      where c.seq > ?${only} order by c.seq limit ${Math.trunc(limit)}`,
    [after, ...(modulos ?? [])])
  return rows.map((r) => ({
    seq: Number(r.seq),
    modulo: r.modulo,
    registro: r.registro,
    version: r.version,
    accion: r.accion,
    usuario: r.usuario,
    fecha: new Date(r.fecha),
    campos: json(r.campos),
    hash: r.hash,
    datos: r.datos === null ? null : json(r.datos),
  }))
}

/** The live rows `ids` of module `modulo`; undefined when no module of that name is declared (modules.yaml dropped it). */
export async function liveRowsOf (db: Db, modulo: string, ids: readonly string[]): Promise<Row[] | undefined> {
  const entity = entityName({ name: modulo })
  if (db.getMetadata().find(entity) === undefined) return undefined
  return findRows(db, entity, { _id: { $in: [...ids] } }, {})
}

/** The ids among `ids` of blocked records of `modulo` (docs/user-guide.md "Personal data"); empty for a module without the column. */
export async function blockedOf (db: Db, modulo: string, ids: readonly string[]): Promise<Set<string>> {
  const meta = db.getMetadata().find(entityName({ name: modulo }))
  if (meta?.properties[BLOCKED_COLUMN] === undefined || ids.length === 0) return new Set()
  const rows = await findRows(db, entityName({ name: modulo }), { _id: { $in: [...ids] }, [BLOCKED_COLUMN]: { $ne: null } }, { columns: ['_id'] })
  return new Set(rows.map((r) => r._id as string))
}

/** The stored row the entry after `version` of a record carries (`anterior`): that version's; null when there is none. */
export async function storedRowAfter (db: Db, modulo: string, registro: string, version: number): Promise<Row | null> {
  const [next] = await queryRows<{ anterior: Row | string | null }>(db,
    'select anterior from sys_historial where modulo = ? and registro = ? and version = ?', [modulo, registro, version + 1])
  return next?.anterior === null || next?.anterior === undefined ? null : json(next.anterior)
}

/** The newest position of the chain (0 when it is empty), read in `db`'s transaction when it has one. */
export async function chainHead (db: Db): Promise<number> {
  const [row] = await queryRows<{ seq: string | null }>(db, 'select max(seq)::text as seq from sys_cadena')
  return Number(row?.seq ?? 0)
}

/** When the write at position `seq` was made; undefined when there is no such position. */
export async function chainEntryDate (db: Db, seq: number): Promise<Date | undefined> {
  const [row] = await queryRows<{ fecha: Date | string }>(db,
    'select h.fecha from sys_cadena c join sys_historial h on h.id = c.historial where c.seq = ?', [seq])
  return row === undefined ? undefined : new Date(row.fecha)
}
