/**
 * The statements of blocking, the officer's decisions and the retention
 * review (records/data-protection/; docs/user-guide.md "Personal data").
 * Dates travel as `YYYY-MM-DD` text both ways, never as a driver's Date.
 */
import type { DecisionKind, DecisionRow } from './data-protection-entities.js'
import { BLOCKED_COLUMN } from './columns.js'
import { quoteIdent } from './schema-renames.js'
import { queryRows, runStatement, type Db } from './statement.js'

/** The ids among `ids` of blocked records of `table`. */
export async function blockedAmong (db: Db, table: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await queryRows<{ _id: string }>(db, `select "_id" from ${quoteIdent(table)} where "_id" in (${ids.map(() => '?').join(', ')}) and ${quoteIdent(BLOCKED_COLUMN)} is not null`, ids)
  return new Set(rows.map((r) => r._id))
}

/** Sets (a date) or clears (null) a record's block; false when the record does not exist. */
export async function setBlocked (db: Db, table: string, id: string, since: Date | null): Promise<boolean> {
  return await runStatement(db, `update ${quoteIdent(table)} set ${quoteIdent(BLOCKED_COLUMN)} = ? where "_id" = ?`, [since, id]) > 0
}

export async function appendDecision (db: Db, d: DecisionRow): Promise<void> {
  await runStatement(db, 'insert into "sys_proteccion_datos" ("fecha", "usuario", "modulo", "registro", "accion", "motivo", "hasta") values (?, ?, ?, ?, ?, ?, ?::date)',
    [d.fecha, d.usuario, d.modulo, d.registro, d.accion, d.motivo, d.hasta])
}

export interface DecisionFilter { modulo?: string, registro?: string, accion?: DecisionKind }

/** A page of decisions, newest first, and how many match. */
export async function decisionsPage (db: Db, filter: DecisionFilter, limit: number, offset: number): Promise<{ rows: DecisionRow[], total: number }> {
  const conditions: string[] = []
  const params: unknown[] = []
  for (const key of ['modulo', 'registro', 'accion'] as const) {
    if (filter[key] === undefined) continue
    conditions.push(`"${key}" = ?`)
    params.push(filter[key])
  }
  const where = conditions.length === 0 ? '' : `where ${conditions.join(' and ')}`
  const rows = await queryRows<DecisionRow & { id: string }>(db, `select "id", "fecha", "usuario", "modulo", "registro", "accion", "motivo", to_char("hasta", 'YYYY-MM-DD') as "hasta" from "sys_proteccion_datos" ${where} order by "id" desc limit ${limit} offset ${offset}`, params)
  const [count] = await queryRows<{ n: string | number }>(db, `select count(*) as n from "sys_proteccion_datos" ${where}`, params)
  return { rows, total: Number(count?.n ?? 0) }
}

/** How one module's due records are found (records/data-protection/retention-review.ts). */
export interface DueQuery {
  readonly modulo: string
  readonly table: string
  readonly years: number
  /** The column `desde` counts from, and whether it holds a date (else an instant, dated in `timeZone`). */
  readonly from: { readonly column: string, readonly date: boolean }
  /** The state column and the states due; absent: every state. */
  readonly states?: { readonly column: string, readonly values: readonly string[] }
}

/**
 * Replaces the list of due records with those of `queries` as of `today`:
 * `desde` plus the years on or before today, in a state due, not prolonged
 * past today, and not erased since their last change.
 */
export async function replaceDue (db: Db, queries: readonly DueQuery[], today: string, timeZone: string, now: Date): Promise<number> {
  await runStatement(db, 'delete from "sys_revision"')
  let total = 0
  for (const q of queries) {
    const col = `t.${quoteIdent(q.from.column)}`
    const since = q.from.date ? col : `timezone(?, ${col})::date`
    const due = `(${since} + make_interval(years => ${Math.trunc(q.years)}))::date`
    const states = q.states === undefined ? '' : `and t.${quoteIdent(q.states.column)} in (${q.states.values.map(() => '?').join(', ')})`
    const sql = `insert into "sys_revision" ("modulo", "registro", "desde", "vence", "calculada")
      select ?, t."_id", ${since}, ${due}, ? from ${quoteIdent(q.table)} t
      where ${col} is not null and ${due} <= ?::date ${states}
        and not exists (select 1 from "sys_proteccion_datos" p where p."modulo" = ? and p."registro" = t."_id" and p."accion" = 'prolongar' and p."hasta" > ?::date)
        and not exists (select 1 from "sys_historial" h where h."modulo" = ? and h."registro" = t."_id" and h."version" = t."_version" and h."accion" = 'suprimir')`
    const zone = q.from.date ? [] : [timeZone]
    total += await runStatement(db, sql, [q.modulo, ...zone, ...zone, now, ...zone, today, ...(q.states?.values ?? []), q.modulo, today, q.modulo])
  }
  return total
}

/** Takes a record off the list (prolonged, or erased). */
export async function dropDue (db: Db, modulo: string, registro: string): Promise<void> {
  await runStatement(db, 'delete from "sys_revision" where "modulo" = ? and "registro" = ?', [modulo, registro])
}

export interface DueView { modulo: string, registro: string, desde: string, vence: string }

/** A page of the due records (of one module, or all), the longest overdue first. */
export async function duePage (db: Db, modulo: string | undefined, limit: number, offset: number): Promise<{ rows: DueView[], total: number }> {
  const where = modulo === undefined ? '' : 'where "modulo" = ?'
  const params = modulo === undefined ? [] : [modulo]
  const rows = await queryRows<DueView>(db, `select "modulo", "registro", to_char("desde", 'YYYY-MM-DD') as "desde", to_char("vence", 'YYYY-MM-DD') as "vence" from "sys_revision" ${where} order by "vence", "modulo", "registro" limit ${limit} offset ${offset}`, params)
  const [count] = await queryRows<{ n: string | number }>(db, `select count(*) as n from "sys_revision" ${where}`, params)
  return { rows, total: Number(count?.n ?? 0) }
}

/** The state, deletion and block of `ids` in `table`, for the review's answer. */
export async function dueStatus (db: Db, table: string, stateColumn: string | undefined, ids: readonly string[], blockable: boolean): Promise<Map<string, { estado: string | null, eliminado: boolean, bloqueado: Date | null }>> {
  if (ids.length === 0) return new Map()
  const state = stateColumn === undefined ? 'null' : quoteIdent(stateColumn)
  const blocked = blockable ? quoteIdent(BLOCKED_COLUMN) : 'null'
  const rows = await queryRows<{ _id: string, estado: string | null, _deleted: unknown, bloqueado: Date | null }>(db,
    `select "_id", ${state} as "estado", "_deleted", ${blocked} as "bloqueado" from ${quoteIdent(table)} where "_id" in (${ids.map(() => '?').join(', ')})`, ids)
  return new Map(rows.map((r) => [r._id, { estado: r.estado, eliminado: r._deleted !== null, bloqueado: r.bloqueado }]))
}

/** Whether the review ran on `day`. */
export async function reviewRanOn (db: Db, day: string): Promise<boolean> {
  return (await queryRows(db, 'select 1 as x from "sys_revision_ejecuciones" where "dia" = ?::date', [day])).length > 0
}

/** Records a run of `day` (a second run that day, asked for, replaces it). */
export async function recordReviewRun (db: Db, day: string, at: Date, total: number, instance: string): Promise<void> {
  await runStatement(db, 'delete from "sys_revision_ejecuciones" where "dia" = ?::date', [day])
  await runStatement(db, 'insert into "sys_revision_ejecuciones" ("dia", "fecha", "total", "instancia") values (?::date, ?, ?, ?)', [day, at, total, instance])
}

export interface ReviewRunView { dia: string, fecha: Date, total: number, instancia: string }

/** The latest run, if any. */
export async function lastReviewRun (db: Db): Promise<ReviewRunView | undefined> {
  const [row] = await queryRows<ReviewRunView>(db, 'select to_char("dia", \'YYYY-MM-DD\') as "dia", "fecha", "total", "instancia" from "sys_revision_ejecuciones" order by "dia" desc limit 1')
  return row
}
