/**
 * Brings the database in line with modules.yaml at start-up. Additive
 * changes (new tables, columns, indexes) apply by themselves, and so does
 * dropping an index the file no longer asks for (derived data; reported,
 * droppedIndexes); anything that would drop or rewrite data is refused with
 * the statements an operator would have to run. Instances starting together
 * take turns through a PostgreSQL advisory lock: each plans from the
 * catalog after the one before it committed, so the second finds nothing
 * left to do.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql'
import type { ModuleDef } from '../core/registry/types.js'
import { skipUnplannedStatistics } from './column-statistics.js'
import { ensureSearchSupport } from './search-setup.js'
import { isDocumentDrop, withDocumentDrops, withDocumentRebuilds } from './search-document-plan.js'
import { findRenames, type RenamedField } from './schema-renames.js'
import { schemaRefusal, type DatabaseKind } from './schema-refusal.js'
import { inTransaction } from './transaction.js'

const LOCK_KEY = 720_092 // any constant shared by all instances

const TYPE_CHANGE = /\balter column "[^"]+" type\b/i

/** True for `alter table "t" alter column "c" type varchar(n)` where the column is a shorter varchar. */
async function widensVarchar (em: EntityManager, statement: string): Promise<boolean> {
  const m = /^alter table "(?:[^"]+"\.")?([^"]+)" alter column "([^"]+)" type varchar\((\d+)\)/i.exec(statement)
  if (m === null) return false
  const rows = await em.getConnection().execute<Array<{ data_type: string, len: number | null }>>(
    'select data_type, character_maximum_length as len from information_schema.columns where table_schema = current_schema() and table_name = ? and column_name = ?',
    [m[1], m[2]], 'all', em.getTransactionContext())
  const col = rows[0]
  return col !== undefined && col.data_type === 'character varying' && col.len !== null && col.len <= Number(m[3])
}

function statements (sql: string): string[] {
  return sql.split(/;\s*\n/).map((s) => s.trim().replace(/;$/, '')).filter((s) => s !== '')
}

export interface SchemaPlan {
  /** Additive statements the start applies by itself. */
  readonly safe: string[]
  /** Statements that would drop or rewrite data: the start refuses them. */
  readonly destructive: string[]
  /** Fields renamed in modules.yaml: refused too (db/schema-renames.ts). */
  readonly renames: RenamedField[]
}

/** What the start would do to the database, without doing it (also `npm run check`). */
export async function planSchema (orm: MikroORM, em: EntityManager = orm.em.fork()): Promise<SchemaPlan> {
  const safe = statements(await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: true, dropTables: false }))
  const full = statements(await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: false }))
  // MikroORM's safe mode only leaves out drops: a type change is in it too,
  // and PostgreSQL would silently cast or truncate stored values. Only a
  // varchar that grows is let through.
  const destructive: string[] = []
  const derived: string[] = []
  for (const s of full) {
    if (!safe.includes(s)) (isDocumentDrop(s) ? derived : destructive).push(s)
    else if (TYPE_CHANGE.test(s) && !(await widensVarchar(em, s))) destructive.push(s)
  }
  return {
    safe: await withDocumentRebuilds(orm, em, [...safe, ...derived]),
    // An operator runs these as listed: a type change needs the search document dropped first (the next start adds it back).
    destructive: await withDocumentDrops(em, destructive, safe),
    renames: await findRenames(orm, em),
  }
}

export { schemaRefusal, type DatabaseKind }

const INDEX_DROP = /^drop index (?:"[^"]+"\.)?"([^"]+)"$/

/**
 * The indexes a plan drops: those modules.yaml no longer asks for (or asks
 * for in another shape, under a new name). Indexes are derived data, so
 * the start drops them by itself and says so (plugins/orm.ts).
 */
export function droppedIndexes (statements: readonly string[]): string[] {
  return statements.map((s) => INDEX_DROP.exec(s)?.[1]).filter((n): n is string => n !== undefined)
}

/**
 * On PostgreSQL under the advisory lock. Embedded PGlite serves one
 * instance and runs a transaction exclusively, so the introspection queries
 * (on other pooled connections) would wait for the lock holder forever.
 */
export async function syncSchema (orm: MikroORM, modulesFile: string, kind: DatabaseKind, modules: readonly ModuleDef[]): Promise<string[]> {
  const apply = async (em: EntityManager): Promise<string[]> => {
    // The search indexes of the module tables need these first.
    await ensureSearchSupport(em)
    const plan = await planSchema(orm, em)
    const refusal = schemaRefusal(modulesFile, plan, kind)
    if (refusal !== undefined) throw refusal
    for (const s of plan.safe) await em.getConnection().execute(s, [], 'run', em.getTransactionContext())
    await skipUnplannedStatistics(em, modules)
    return plan.safe
  }
  if (kind === 'embedded') return apply(orm.em.fork())
  return inTransaction(orm.em.fork(), async (em) => {
    await em.getConnection().execute(`select pg_advisory_xact_lock(${LOCK_KEY})`, [], 'all', em.getTransactionContext())
    return apply(em)
  })
}
