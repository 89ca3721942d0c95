/**
 * What search (docs/user-guide.md "Search") needs in the database before the module tables'
 * indexes can be built: the `unaccent` and `pg_trgm` extensions (contrib
 * modules of PostgreSQL; embedded PGlite loads them in db/embedded.ts) and
 * the immutable folding function of db/search-sql.ts, and `q`'s query
 * function (db/prefix-query.ts). Run by the start-up schema sync, before
 * the indexes that use them.
 *
 * `search_fold(text)` is `lower(unaccent(text))` with the dictionary named.
 * `unaccent()` is only STABLE (its dictionary could change), so an
 * immutable SQL wrapper around it, which an index needs, is never inlined:
 * PostgreSQL calls it as a separate SQL function for every row a trigram
 * match rechecks, half of `contiene`'s time. Where the role may create a
 * C-language function (a superuser: the embedded database, a self-hosted
 * server whose owner runs the start or `npm run migrate`), the wrapper calls
 * unaccent's own C entry point declared immutable (`search_unaccent`), and
 * PostgreSQL inlines it: the same results, about twice as fast per row.
 * Elsewhere (a managed database) the wrapper is PL/pgSQL: a SQL function
 * that cannot be inlined is parsed and planned anew in every statement that
 * calls it — nine times in every insert into a table with search indexes —
 * where PL/pgSQL keeps its compiled body and the plan of its expression for
 * the session (docs/performance.md "Figures behind the code's choices").
 * All give the same text, so the indexes built
 * with any of them stay valid when it changes.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import { ConfigError } from '../core/errors.js'
import { FOLD_FUNCTION } from './search-sql.js'
import { QUERY_FUNCTION, queryFunctionBody } from './prefix-query.js'

export const SEARCH_EXTENSIONS = ['unaccent', 'pg_trgm'] as const

/** unaccent's C entry point, declared immutable (created only by a superuser). */
const UNACCENT_C = 'search_unaccent'

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
  await defineFold(em, quoteIdent(rows[0]!.schema))
  await defineQuery(em)
}

/**
 * (Re)defines `search_fold` when it is missing or slower than it could be;
 * leaves it alone when it already is what this role would write, so that a
 * start by a role that does not own it (or may not create C functions)
 * does not undo what an owner set up.
 */
async function defineFold (em: EntityManager, schema: string): Promise<void> {
  const dictionary = `'${schema.replace(/'/g, "''")}.unaccent'::regdictionary`
  const [here] = await run<Array<{ schema: string }>>(em, 'select current_schema() as schema')
  // Qualified: a function body is resolved with the search_path of its
  // caller, and maintenance (ANALYZE, VACUUM, REINDEX) runs with a bare one.
  const unaccentC = `${quoteIdent(here!.schema)}.${UNACCENT_C}`
  const current = (await run<Array<{ src: string }>>(em,
    `select p.prosrc as src from pg_proc p where p.proname = '${FOLD_FUNCTION}' and p.pronamespace = current_schema()::text::regnamespace`))[0]?.src
  const fast = ` select lower(${unaccentC}(${dictionary}, $1)) `
  if (current === fast) return
  const [role] = await run<Array<{ superuser: boolean }>>(em, 'select rolsuper as superuser from pg_roles where rolname = current_user')
  if (role?.superuser === true) {
    // The very library and symbol the extension's own unaccent(regdictionary, text) uses.
    const [c] = await run<Array<{ lib: string, symbol: string }>>(em,
      `select probin as lib, prosrc as symbol from pg_proc where oid = '${schema}.unaccent(regdictionary, text)'::regprocedure`)
    await run(em,
      `create or replace function ${unaccentC}(regdictionary, text) returns text language c immutable strict parallel safe ` +
      `as '${c!.lib.replace(/'/g, "''")}', '${c!.symbol.replace(/'/g, "''")}'`)
    await createFold(em, fast)
    return
  }
  const plain = ` begin return lower(${schema}.unaccent(${dictionary}, $1)); end `
  if (current !== plain) await createFold(em, plain, 'plpgsql')
}

/** (Re)defines `search_query` (db/prefix-query.ts) when it is missing or differs, like the fold. */
async function defineQuery (em: EntityManager): Promise<void> {
  const [here] = await run<Array<{ schema: string }>>(em, 'select current_schema() as schema')
  const body = queryFunctionBody(`${quoteIdent(here!.schema)}.${FOLD_FUNCTION}`)
  const current = (await run<Array<{ src: string }>>(em,
    `select p.prosrc as src from pg_proc p where p.proname = '${QUERY_FUNCTION}' and p.pronamespace = current_schema()::text::regnamespace`))[0]?.src
  if (current === body) return
  await run(em, `create or replace function ${QUERY_FUNCTION}(text) returns tsquery language sql immutable strict parallel safe as $$${body}$$`)
}

async function createFold (em: EntityManager, body: string, language: 'sql' | 'plpgsql' = 'sql'): Promise<void> {
  await run(em, `create or replace function ${FOLD_FUNCTION}(text) returns text language ${language} immutable strict parallel safe as $$${body}$$`)
}
