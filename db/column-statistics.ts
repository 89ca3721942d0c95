/**
 * What ANALYZE (autovacuum's, after about every tenth of a table is new)
 * spends on tables no plan needs it for (docs/decisions.md "Planner
 * statistics only where a query reads by value").
 *
 * - Columns no query filters, sorts or joins on keep no planner
 *   statistics: ANALYZE skips them. The history's JSON columns and the
 *   hashes were most of that work on every write-heavy load
 *   (docs/performance.md "Three ways at every load": ANALYZE of 160,000
 *   history entries took 470–600 ms with them, 180 ms without). The
 *   columns queries do read by value (`modulo`, `registro`, `version`,
 *   `xid`, `seq`, `fecha`) keep theirs. In module tables: the version hash
 *   `_hash`, ciphertext (an encrypted value is compared only through its
 *   blind index) and a password's hash.
 * - The two append-only logs, the history and the chain, are analyzed
 *   when half of them is new instead of a tenth: every query on them goes
 *   through a unique key or a range of an ascending key, whose ends the
 *   planner reads off the index, so fresher statistics change no plan,
 *   and each ANALYZE reads a sample of up to 30,000 rows
 *   (docs/performance.md "What autovacuum adds to a create").
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { ModuleDef } from '../core/registry/types.js'
import { typeOf } from '../core/field-types/index.js'
import { valueColumn } from './columns.js'
import { quoteIdent } from './schema-renames.js'

const UNPLANNED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  sys_historial: ['hash', 'campos', 'datos', 'anterior', 'supresion'],
  sys_cadena: ['entrada', 'enlace'],
}

/** The append-only logs and their ANALYZE threshold, a share of their rows (PostgreSQL's default is 0.1). */
const LOG_ANALYZE_SCALE = 0.5
const APPEND_ONLY_LOGS = ['sys_historial', 'sys_cadena'] as const

/** A module table's columns no query reads by value. */
function moduleUnplannedColumns (mod: ModuleDef): string[] {
  return ['_hash', ...mod.fields.filter((f) => f.encrypted || typeOf(f).columnSuffix !== undefined).map(valueColumn)]
}

/**
 * Sets the statistics target to 0 and the logs' ANALYZE threshold where
 * they are not so yet (a start after the first changes nothing and takes
 * no lock).
 */
export async function skipUnplannedStatistics (em: EntityManager, modules: readonly ModuleDef[]): Promise<void> {
  const conn = em.getConnection()
  const ctx = em.getTransactionContext()
  const tables: Record<string, readonly string[]> = { ...UNPLANNED_COLUMNS }
  for (const mod of modules) tables[mod.table] = moduleUnplannedColumns(mod)
  for (const [table, columns] of Object.entries(tables)) {
    const rows = await conn.execute<Array<{ attname: string }>>(
      `select attname from pg_attribute where attrelid = to_regclass(?) and attname in (${columns.map(() => '?').join(', ')}) and coalesce(attstattarget, -1) <> 0 and not attisdropped`,
      [quoteIdent(table), ...columns], 'all', ctx)
    if (rows.length === 0) continue
    await conn.execute(`alter table ${quoteIdent(table)} ${rows.map((r) => `alter column ${quoteIdent(r.attname)} set statistics 0`).join(', ')}`, [], 'run', ctx)
  }
  const setting = `autovacuum_analyze_scale_factor=${LOG_ANALYZE_SCALE}`
  for (const table of APPEND_ONLY_LOGS) {
    const [row] = await conn.execute<Array<{ set: boolean }>>(
      'select coalesce(? = any(reloptions), false) as set from pg_class where oid = to_regclass(?)', [setting, quoteIdent(table)], 'all', ctx)
    if (row === undefined || row.set) continue
    await conn.execute(`alter table ${quoteIdent(table)} set (autovacuum_analyze_scale_factor = ${LOG_ANALYZE_SCALE})`, [], 'run', ctx)
  }
}
