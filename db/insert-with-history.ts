/**
 * A new record and its first history entry as one SQL statement
 * (`with r as (insert into <table> …) insert into sys_historial …`): one
 * round trip instead of four (BEGIN, two INSERTs, COMMIT), and as atomic —
 * a statement commits whole or not at all, both rows carry the same
 * transaction id (`xid`, the global chain's order, records/integrity/global-chain.ts).
 * Every create writes with it (records/storage/sql-module-storage.ts):
 * with the other creates of its turn when nothing else needs its
 * transaction (db/insert-batch.ts), else inside the transaction that runs
 * its reference and uniqueness checks and `inside` hooks.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Row } from './module-entity.js'
import { HISTORY_WRITTEN_COLUMNS } from './history-entity.js'

/** A column of the insert; `json`: sent as JSON text (jsonb). */
export interface InsertColumn {
  readonly name: string
  readonly json: boolean
}

function ident (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** The history entry's columns: the entity's (db/history-entity.ts). */
const HISTORY_COLUMNS: readonly InsertColumn[] = HISTORY_WRITTEN_COLUMNS

/**
 * The statement's text for a table and its columns: made once per module.
 * `rows` > 1: that many records and entries in one statement (a turn's creates, db/insert-batch.ts; an import,
 * docs/user-guide.md "Import (importar)").
 */
export function insertWithHistorySql (table: string, columns: readonly InsertColumn[], rows = 1): string {
  const list = (cs: readonly InsertColumn[]): string => cs.map((c) => ident(c.name)).join(', ')
  const marks = (cs: readonly InsertColumn[]): string => Array(rows).fill(`(${cs.map((c) => c.json ? '?::jsonb' : '?').join(', ')})`).join(', ')
  return `with r as (insert into ${ident(table)} (${list(columns)}) values ${marks(columns)}) ` +
    `insert into "sys_historial" (${list(HISTORY_COLUMNS)}) values ${marks(HISTORY_COLUMNS)}`
}

/** How many values one record and its entry bind: a batch stays under PostgreSQL's 65,535 parameters. */
export function boundPerRow (columns: readonly InsertColumn[]): number {
  return columns.length + HISTORY_COLUMNS.length
}

const bound = (c: InsertColumn, v: unknown): unknown => v === undefined || v === null ? null : c.json ? JSON.stringify(v) : v

/** Runs the statement (errors converted as the ORM's own writes are: unique violations, connection loss …). */
export async function insertWithHistory (em: EntityManager, sql: string, columns: readonly InsertColumn[], row: Row, history: object): Promise<void> {
  await insertManyWithHistory(em, sql, columns, [row], [history])
}

/** Runs a statement made for `rows.length` records (insertWithHistorySql), each with its history entry. */
export async function insertManyWithHistory (em: EntityManager, sql: string, columns: readonly InsertColumn[], rows: readonly Row[], histories: readonly object[]): Promise<void> {
  // Filled by index: every create binds its values here (docs/performance.md "Cheaper by the request").
  const params = new Array<unknown>(rows.length * columns.length + histories.length * HISTORY_COLUMNS.length)
  let at = 0
  for (const row of rows) for (const c of columns) params[at++] = bound(c, row[c.name])
  for (const history of histories) for (const c of HISTORY_COLUMNS) params[at++] = bound(c, (history as Record<string, unknown>)[c.name])
  try {
    await em.getConnection().execute(sql, params, 'run', em.getTransactionContext())
  } catch (err) {
    throw em.getDriver().convertException(err as Error)
  }
}
