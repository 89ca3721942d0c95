/**
 * A new record and its first history entry as one SQL statement
 * (`with r as (insert into <table> …) insert into sys_historial …`): one
 * round trip instead of four (BEGIN, two INSERTs, COMMIT), and as atomic —
 * a statement commits whole or not at all, both rows carry the same
 * transaction id (`xid`, the global chain's order, records/integrity/ledger.ts).
 * Every create writes with it (records/storage/sql-module-storage.ts):
 * alone when nothing else needs its transaction, else inside the
 * transaction that runs its reference and uniqueness checks and `inside` hooks.
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

/** The statement's text for a table and its columns: made once per module. */
export function insertWithHistorySql (table: string, columns: readonly InsertColumn[]): string {
  const list = (cs: readonly InsertColumn[]): string => cs.map((c) => ident(c.name)).join(', ')
  const marks = (cs: readonly InsertColumn[]): string => cs.map((c) => c.json ? '?::jsonb' : '?').join(', ')
  return `with r as (insert into ${ident(table)} (${list(columns)}) values (${marks(columns)})) ` +
    `insert into "sys_historial" (${list(HISTORY_COLUMNS)}) values (${marks(HISTORY_COLUMNS)})`
}

const bound = (c: InsertColumn, v: unknown): unknown => v === undefined || v === null ? null : c.json ? JSON.stringify(v) : v

/** Runs the statement (errors converted as the ORM's own writes are: unique violations, connection loss …). */
export async function insertWithHistory (em: EntityManager, sql: string, columns: readonly InsertColumn[], row: Row, history: object): Promise<void> {
  const params = [...columns.map((c) => bound(c, row[c.name])), ...HISTORY_COLUMNS.map((c) => bound(c, (history as Record<string, unknown>)[c.name]))]
  try {
    await em.getConnection().execute(sql, params, 'run', em.getTransactionContext())
  } catch (err) {
    throw em.getDriver().convertException(err as Error)
  }
}
