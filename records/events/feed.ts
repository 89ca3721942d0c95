/**
 * The event feed (docs/user-guide.md "Events"): one event per committed
 * write, read off the global chain (records/integrity/ledger.ts). The
 * chain holds every history entry once, in the order its transaction
 * committed, and nothing of a transaction that did not commit; an event's
 * position is its entry's `seq`, and its hash the version's `_hash`, so
 * both can be checked against the chain and the history. Nothing is
 * stored for the feed itself: it is a read of `sys_cadena` joined to
 * `sys_historial` (whose rows are never deleted), and retention
 * (EVENT_RETENTION_DAYS) only bounds how far back a reader may resume.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { HistoryAction } from '../../db/history-entity.js'
import { entityName, type Row } from '../../db/module-entity.js'
import { findRows } from '../../db/row-query.js'

/** One entry of the feed: a sealed history version with its position. */
export interface FeedEntry {
  readonly posicion: number
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
  /** The stored row of this version (encrypted values still encrypted). */
  readonly datos: Row
}

/** What a write is called in an event's `tipo` (`denuncias.creado`). */
export const EVENT_KINDS: Readonly<Record<HistoryAction, string>> = {
  crear: 'creado',
  editar: 'actualizado',
  eliminar: 'eliminado',
  restaurar: 'restaurado',
}

interface FeedRow {
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
 * Up to `limit` entries after position `after`, oldest first; with
 * `modulos`, only theirs (the positions keep their gaps).
 */
export async function readFeed (em: EntityManager, after: number, limit: number, modulos?: readonly string[]): Promise<FeedEntry[]> {
  const only = modulos === undefined ? '' : ` and c.modulo in (${modulos.map(() => '?').join(', ')})`
  // A version's stored row: its entry's own (older entries) or the next entry's `anterior`; the newest is the live row (below).
  const rows = await em.getConnection().execute<FeedRow[]>(
    `select c.seq::text as seq, h.modulo, h.registro, h.version, h.accion, h.usuario, h.fecha, h.campos, h.hash, coalesce(h.datos, n.anterior) as datos
       from sys_cadena c join sys_historial h on h.id = c.historial
       left join sys_historial n on n.modulo = h.modulo and n.registro = h.registro and n.version = h.version + 1
      where c.seq > ?${only} order by c.seq limit ${Math.trunc(limit)}`,
    [after, ...(modulos ?? [])], 'all')
  const newest = await newestRows(em, rows.filter((r) => r.datos === null))
  return rows.map((r) => ({
    posicion: Number(r.seq),
    modulo: r.modulo,
    registro: r.registro,
    version: r.version,
    accion: r.accion,
    usuario: r.usuario,
    fecha: new Date(r.fecha),
    campos: json(r.campos),
    hash: r.hash,
    datos: r.datos === null ? newest.get(`${r.modulo}/${r.registro}/${r.version}`) ?? {} : json(r.datos),
  }))
}

/**
 * The stored rows of versions that were their record's newest when the
 * feed was read: the live rows, in the form the history keeps (JSON), or,
 * for a record written again since, the `anterior` of the entry that
 * followed. `{}` for a version the database holds nowhere (deleted or rolled
 * back behind the service's back; /verificar reports it) or of a module
 * modules.yaml no longer declares.
 */
async function newestRows (em: EntityManager, wanted: readonly FeedRow[]): Promise<Map<string, Row>> {
  const out = new Map<string, Row>()
  const later: FeedRow[] = []
  for (const modulo of new Set(wanted.map((r) => r.modulo))) {
    const entity = entityName({ name: modulo })
    if (em.getMetadata().find(entity) === undefined) continue
    const ofModule = wanted.filter((r) => r.modulo === modulo)
    const live = new Map((await findRows(em, entity, { _id: { $in: [...new Set(ofModule.map((r) => r.registro))] } }, {})).map((row) => [row._id as string, row]))
    for (const r of ofModule) {
      const row = live.get(r.registro)
      if (row !== undefined && row._version === r.version) out.set(`${r.modulo}/${r.registro}/${r.version}`, JSON.parse(JSON.stringify(row)) as Row)
      else if (row !== undefined && (row._version as number) > r.version) later.push(r)
    }
  }
  // Written again between the two reads: the next entry, committed with the live row, carries this version.
  for (const r of later) {
    const [next] = await em.getConnection().execute<Array<{ anterior: Row | string | null }>>(
      'select anterior from sys_historial where modulo = ? and registro = ? and version = ?', [r.modulo, r.registro, r.version + 1], 'all')
    if (next?.anterior !== null && next?.anterior !== undefined) out.set(`${r.modulo}/${r.registro}/${r.version}`, json(next.anterior))
  }
  return out
}

/** The newest position (0 when the chain is empty). */
export async function feedHead (em: EntityManager): Promise<number> {
  const [row] = await em.getConnection().execute<Array<{ seq: string | null }>>('select max(seq)::text as seq from sys_cadena', [], 'all')
  return Number(row?.seq ?? 0)
}

/**
 * When the write at `posicion` was made (undefined when there is no such
 * position): a reader resuming after an entry older than the retention is
 * told to reload instead (docs/user-guide.md "Events").
 */
export async function writtenAt (em: EntityManager, posicion: number): Promise<Date | undefined> {
  const [row] = await em.getConnection().execute<Array<{ fecha: Date | string }>>(
    'select h.fecha from sys_cadena c join sys_historial h on h.id = c.historial where c.seq = ?', [posicion], 'all')
  return row === undefined ? undefined : new Date(row.fecha)
}
