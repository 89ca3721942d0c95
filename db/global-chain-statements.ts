/**
 * The statements of the global chain (db/global-chain-entity.ts): what the sealer
 * reads and appends, the watermark and identity kept in
 * `sys_cadena_estado`, and the reads /verificar makes of one record's
 * entries and of a stretch of links. records/integrity/global-chain.ts decides
 * what to seal and what a broken link is; the SQL is here.
 */
import type { ChainEntryRow } from './global-chain-entity.js'
import { queryRows, runStatement, type Db } from './statement.js'

/** What of a history row enters its chain entry: its own columns, not its snapshot (covered by `hash`). */
export interface EntryColumns {
  modulo: string
  registro: string
  version: number
  accion: string
  usuario: string
  /** UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`: exact to the microsecond, as the entry hashes it. */
  fecha: string
  hash: string
  campos: unknown
  sello: number
}

/** The history columns an entry is computed from, as selected from `sys_historial` (`fecha` as EntryColumns says). */
const ENTRY_COLUMNS_SQL = `modulo, registro, version, accion, usuario, to_char(fecha at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as fecha, hash, campos, sello`

/** A history row waiting to be sealed: its entry columns and its place in commit order. */
export interface PendingRow extends EntryColumns {
  id: string
  xid: string
}

/** One entry appended to the chain: a row of sys_cadena. */
export type NewChainEntry = ChainEntryRow

/** The newest entry of the chain, or undefined when it is empty. */
export async function chainTip (db: Db): Promise<{ seq: string, enlace: string } | undefined> {
  const [row] = await queryRows<{ seq: string, enlace: string }>(db, 'select seq, enlace from sys_cadena order by seq desc limit 1')
  return row
}

/** The link stored at `seq`, or undefined when the chain has no such entry. */
export async function linkAt (db: Db, seq: number): Promise<string | undefined> {
  const [row] = await queryRows<{ enlace: string }>(db, 'select enlace from sys_cadena where seq = ?', [seq])
  return row?.enlace
}

/** The oldest transaction still running, as of a snapshot taken now (xid8 as text). */
export async function snapshotXmin (db: Db): Promise<string> {
  const [snap] = await queryRows<{ xmin: string }>(db, 'select pg_snapshot_xmin(pg_current_snapshot())::text as xmin')
  return snap!.xmin
}

/** The sealer's watermark (xid8 as text), its row made on the first run. */
export async function sealWatermark (db: Db): Promise<string> {
  await runStatement(db, "insert into sys_cadena_estado (id, marca) values (1, '0') on conflict (id) do nothing")
  const [state] = await queryRows<{ marca: string }>(db, 'select marca::text as marca from sys_cadena_estado where id = 1')
  return state!.marca
}

export async function moveSealWatermark (db: Db, xmin: string): Promise<void> {
  await runStatement(db, 'update sys_cadena_estado set marca = ?::xid8 where id = 1', [xmin])
}

/**
 * Up to `limit` history rows not yet in the chain whose transaction id lies
 * in [from, below), after `after` in (transaction id, row id) order. The
 * order names the table's columns: `xid` and `id` alone would be the
 * select list's text copies, ordered as text (`10000` before `9999`), and
 * a run of more than one batch would skip the rows past its `after`
 * (test/integration/seal-order.test.ts).
 */
export async function unsealedHistory (db: Db, from: string, below: string, after: { xid: string, id: string }, limit: number): Promise<PendingRow[]> {
  return queryRows<PendingRow>(db,
    `select id::text as id, xid::text as xid, ${ENTRY_COLUMNS_SQL} from sys_historial h
          where xid >= ?::xid8 and xid < ?::xid8 and (xid, id) > (?::xid8, ?::bigint)
            and not exists (select 1 from sys_cadena c where c.historial = h.id)
          order by h.xid, h.id limit ${limit}`,
    [from, below, after.xid, after.id])
}

/**
 * Whether history rows at or past `xmin` exist: a run could not take them
 * yet (their transaction, or an older one, was running). Read as the first
 * such row in `xid` order, so that every plan walks the `xid` index: an
 * `exists` would get a generic plan expecting a third of the table to
 * match, and scan the table from its oldest rows when none does.
 */
export async function heldBack (db: Db, xmin: string): Promise<boolean> {
  const rows = await queryRows<{ held: number }>(db, 'select 1 as held from sys_historial where xid >= ?::xid8 order by xid limit 1', [xmin])
  return rows.length > 0
}

/**
 * The entries of a run as seven arrays, one per column: one statement text
 * whatever their number, named and planned once per connection. A `values`
 * list of n rows was a new text for every n, each parsed and planned with
 * its 7n parameters (30–50 ms for a run of 2,000), and each took a place
 * among the named texts (db/prepared-statements.ts). One JSON value read by
 * `json_to_recordset` did the same, and PostgreSQL parsed it twice (the
 * `json` input, then the record set): the arrays cost it about a tenth less
 * (docs/performance.md "The sealer's statement", "A lone create's
 * statements, one by one").
 */
const APPEND_SQL = `insert into sys_cadena (seq, historial, modulo, registro, version, entrada, enlace)
  select * from unnest(?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::integer[], ?::text[], ?::text[])`

/** An array literal of PostgreSQL's text form, every element quoted: `{"a","b\\"c"}`. */
function arrayLiteral (values: ReadonlyArray<string | number>): string {
  let text = '{'
  for (let i = 0; i < values.length; i++) text += `${i === 0 ? '' : ','}"${String(values[i]).replace(/["\\]/g, '\\$&')}"`
  return text + '}'
}

/** Appends entries to the chain in one statement. */
export async function appendChainEntries (db: Db, entries: readonly NewChainEntry[]): Promise<void> {
  if (entries.length === 0) return
  const column = (of: (e: NewChainEntry) => string | number): string => arrayLiteral(entries.map(of))
  await runStatement(db, APPEND_SQL, [
    column((e) => e.seq), column((e) => e.historial), column((e) => e.modulo), column((e) => e.registro),
    column((e) => e.version), column((e) => e.entrada), column((e) => e.enlace),
  ])
}

/** The chain entries of one record, in chain order. */
export async function recordChainEntries (db: Db, modulo: string, registro: string): Promise<Array<{ seq: string, version: number, entrada: string, enlace: string }>> {
  return queryRows(db, 'select seq, version, entrada, enlace from sys_cadena where modulo = ? and registro = ? order by seq', [modulo, registro])
}

/** The entry columns of every history row of one record. */
export async function recordEntryColumns (db: Db, modulo: string, registro: string): Promise<EntryColumns[]> {
  return queryRows<EntryColumns>(db, `select ${ENTRY_COLUMNS_SQL} from sys_historial where modulo = ? and registro = ?`, [modulo, registro])
}

/** Up to `limit` entries after `after`, up to `upTo` (inclusive) when given, in chain order. */
export async function chainStretch (db: Db, after: number, upTo: number | undefined, limit: number): Promise<Array<{ seq: string, entrada: string, enlace: string }>> {
  const upper = upTo === undefined ? '' : ` and seq <= ${upTo}`
  return queryRows(db, `select seq, entrada, enlace from sys_cadena where seq > ?${upper} order by seq limit ${limit}`, [after])
}

/** Versions of one record below the watermark that have no chain entry, in order. */
export async function unsealedBelowWatermark (db: Db, modulo: string, registro: string): Promise<number[]> {
  const rows = await queryRows<{ version: number }>(db,
    `select h.version from sys_historial h
      where h.modulo = ? and h.registro = ? and h.xid < coalesce((select marca from sys_cadena_estado where id = 1), '0'::xid8)
        and not exists (select 1 from sys_cadena c where c.historial = h.id) order by h.version`, [modulo, registro])
  return rows.map((r) => r.version)
}

/** The chain identity stored in `sys_cadena_estado`: null when the row has none yet, undefined when there is no row. */
export async function storedChainId (db: Db): Promise<string | null | undefined> {
  const [row] = await queryRows<{ cadena: string | null }>(db, 'select cadena from sys_cadena_estado where id = 1')
  return row === undefined ? undefined : row.cadena
}

/** Stores `candidate` as the chain identity unless one is there already; answers the one stored. */
export async function keepChainId (db: Db, candidate: string): Promise<string> {
  const [made] = await queryRows<{ cadena: string }>(db, `insert into sys_cadena_estado (id, marca, cadena) values (1, '0', ?)
    on conflict (id) do update set cadena = coalesce(sys_cadena_estado.cadena, excluded.cadena) returning cadena`, [candidate])
  return made!.cadena
}

/** Whether the schema has the chain identity column yet (a database older than it does not). */
export async function hasChainIdColumn (db: Db): Promise<boolean> {
  const [col] = await queryRows<{ n: number }>(db,
    "select 1 as n from information_schema.columns where table_schema = current_schema() and table_name = 'sys_cadena_estado' and column_name = 'cadena'")
  return col !== undefined
}
