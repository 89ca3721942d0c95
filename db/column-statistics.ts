/**
 * Columns no query filters, sorts or joins on keep no planner statistics:
 * ANALYZE (autovacuum's, after about every tenth of a table is new) skips
 * them. The history's JSON columns and the hashes were most of that work
 * on every write-heavy load (docs/performance.md "Three ways at every
 * load": ANALYZE of 160,000 history entries took 470–600 ms with them,
 * 180 ms without). The columns queries do read by value (`modulo`,
 * `registro`, `version`, `xid`, `seq`, `fecha`) keep theirs.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { quoteIdent } from './schema-renames.js'

const UNPLANNED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  sys_historial: ['hash', 'campos', 'datos', 'anterior', 'supresion'],
  sys_cadena: ['entrada', 'enlace'],
}

/** Sets the target to 0 where it is not yet (a start after the first changes nothing and takes no lock). */
export async function skipUnplannedStatistics (em: EntityManager): Promise<void> {
  const conn = em.getConnection()
  const ctx = em.getTransactionContext()
  for (const [table, columns] of Object.entries(UNPLANNED_COLUMNS)) {
    const rows = await conn.execute<Array<{ attname: string }>>(
      `select attname from pg_attribute where attrelid = to_regclass(?) and attname in (${columns.map(() => '?').join(', ')}) and coalesce(attstattarget, -1) <> 0 and not attisdropped`,
      [quoteIdent(table), ...columns], 'all', ctx)
    if (rows.length === 0) continue
    await conn.execute(`alter table ${quoteIdent(table)} ${rows.map((r) => `alter column ${quoteIdent(r.attname)} set statistics 0`).join(', ')}`, [], 'run', ctx)
  }
}
