/**
 * What search (SPEC S12) needs in the database before the module tables'
 * indexes can be built: the `unaccent` and `pg_trgm` extensions (contrib
 * modules of PostgreSQL; embedded PGlite loads them in db/embedded.ts) and
 * the immutable folding function of db/search-sql.ts. Run by the start-up
 * schema sync, before the indexes that use them.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { ConfigError } from '../core/errors.js'
import { FOLD_FUNCTION } from './search-sql.js'

export const SEARCH_EXTENSIONS = ['unaccent', 'pg_trgm'] as const

async function run<T> (em: EntityManager, sql: string): Promise<T> {
  return em.getConnection().execute(sql, [], 'all', em.getTransactionContext()) as Promise<T>
}

function quoteIdent (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** Installs the extensions (when missing) and (re)defines the folding function. */
export async function ensureSearchSupport (em: EntityManager): Promise<void> {
  const installed = new Set((await run<Array<{ extname: string }>>(em, 'select extname from pg_extension')).map((r) => r.extname))
  for (const ext of SEARCH_EXTENSIONS) {
    if (installed.has(ext)) continue
    try {
      await run(em, `create extension if not exists ${ext}`)
    } catch (err) {
      throw new ConfigError(
        `the PostgreSQL extension "${ext}" is needed for search (contiene, q) and could not be installed: ${(err as Error).message}.\n` +
        'Install the PostgreSQL contrib modules on the database server (Debian/Ubuntu: they come with the postgresql package; ' +
        'other systems: postgresql-contrib), or have a database superuser run\n' +
        `  create extension if not exists unaccent; create extension if not exists pg_trgm;\n` +
        'in this database, then start again.')
    }
  }
  const rows = await run<Array<{ schema: string }>>(em,
    "select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'unaccent'")
  const schema = quoteIdent(rows[0]!.schema)
  // unaccent() is only STABLE (its dictionary could change); naming the
  // dictionary makes the result depend on the argument alone, which is what
  // an index expression needs. Lower case after unaccent, so that `Á` is
  // folded whatever the database's collation knows about case.
  await run(em,
    `create or replace function ${FOLD_FUNCTION}(text) returns text language sql immutable strict parallel safe ` +
    `as $$ select lower(${schema}.unaccent('${schema.replace(/'/g, "''")}.unaccent'::regdictionary, $1)) $$`)
}
