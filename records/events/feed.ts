/**
 * The event feed (docs/user-guide.md "Events"): one event per committed
 * write, read off the global chain (records/integrity/global-chain.ts). The
 * chain holds every history entry once, in the order its transaction
 * committed, and nothing of a transaction that did not commit; an event's
 * position is its entry's `seq`, and its hash the version's `_hash`, so
 * both can be checked against the chain and the history. Nothing is
 * stored for the feed itself: it is a read of `sys_cadena` joined to
 * `sys_historial` (whose rows are never deleted), and retention
 * (EVENT_RETENTION_DAYS) only bounds how far back a reader may resume.
 */
import type { Db } from '../../db/statement.js'
import type { HistoryAction } from '../../db/history-entity.js'
import { blockedOf, chainEntriesAfter, chainEntryDate, chainHead, liveRowsOf, storedRowAfter, type ChainedEntry } from '../../db/feed-statements.js'
import type { Row } from '../../db/module-entity.js'

/** One entry of the feed: a sealed history version with its position. */
export interface FeedEntry extends Omit<ChainedEntry, 'seq' | 'datos'> {
  readonly posicion: number
  /** The stored row of this version (encrypted values still encrypted). */
  readonly datos: Row
  /** Its record is blocked now, whenever the version was written (docs/user-guide.md "Personal data"). */
  readonly bloqueado: boolean
}

/** What a write is called in an event's `tipo` (`denuncias.creado`). */
export const EVENT_KINDS: Readonly<Record<HistoryAction, string>> = {
  crear: 'creado',
  editar: 'actualizado',
  eliminar: 'eliminado',
  restaurar: 'restaurado',
  // An erasure of personal data (docs/user-guide.md "Personal data"): a receiver that keeps copies erases them too.
  suprimir: 'suprimido',
}

/**
 * Up to `limit` entries after position `after`, oldest first; with
 * `modulos`, only theirs (the positions keep their gaps).
 */
export async function readFeed (em: Db, after: number, limit: number, modulos?: readonly string[]): Promise<FeedEntry[]> {
  const rows = await chainEntriesAfter(em, after, limit, modulos)
  // A version's stored row: its entry's own (older entries) or the next entry's `anterior`; the newest is the live row (below).
  const newest = await newestRows(em, rows.filter((r) => r.datos === null))
  // Read once for every reader of the batch: whether each record is blocked now.
  const blocked = new Set<string>()
  for (const modulo of new Set(rows.map((r) => r.modulo))) {
    for (const id of await blockedOf(em, modulo, [...new Set(rows.filter((r) => r.modulo === modulo).map((r) => r.registro))])) blocked.add(`${modulo}/${id}`)
  }
  return rows.map(({ seq, datos, ...r }) => ({
    posicion: seq,
    ...r,
    datos: datos ?? newest.get(`${r.modulo}/${r.registro}/${r.version}`) ?? {},
    bloqueado: blocked.has(`${r.modulo}/${r.registro}`),
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
async function newestRows (em: Db, wanted: readonly ChainedEntry[]): Promise<Map<string, Row>> {
  const out = new Map<string, Row>()
  const later: ChainedEntry[] = []
  for (const modulo of new Set(wanted.map((r) => r.modulo))) {
    const ofModule = wanted.filter((r) => r.modulo === modulo)
    const rows = await liveRowsOf(em, modulo, [...new Set(ofModule.map((r) => r.registro))])
    if (rows === undefined) continue
    const live = new Map(rows.map((row) => [row._id as string, row]))
    for (const r of ofModule) {
      const row = live.get(r.registro)
      if (row !== undefined && row._version === r.version) out.set(`${r.modulo}/${r.registro}/${r.version}`, JSON.parse(JSON.stringify(row)) as Row)
      else if (row !== undefined && (row._version as number) > r.version) later.push(r)
    }
  }
  // Written again between the two reads: the next entry, committed with the live row, carries this version.
  for (const r of later) {
    const anterior = await storedRowAfter(em, r.modulo, r.registro, r.version)
    if (anterior !== null) out.set(`${r.modulo}/${r.registro}/${r.version}`, anterior)
  }
  return out
}

/** The newest position (0 when the chain is empty). */
export async function feedHead (em: Db): Promise<number> {
  return chainHead(em)
}

/**
 * When the write at `posicion` was made (undefined when there is no such
 * position): a reader resuming after an entry older than the retention is
 * told to reload instead (docs/user-guide.md "Events").
 */
export async function writtenAt (em: Db, posicion: number): Promise<Date | undefined> {
  return chainEntryDate(em, posicion)
}
