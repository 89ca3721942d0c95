/**
 * A renamed field in a schema plan: in one module table a column that no
 * declared field uses any more, while a declared field's column is new.
 * MikroORM would rename the column by itself when the two look alike (and
 * then fail on the search document that already names the new column), or
 * add one and drop the other. Neither is safe: a field's name is sealed
 * in every record's `_hash` (docs/operator-guide.md "The hash chain") and bound into each
 * encrypted value (core/crypto.ts, AES-GCM additional data), so the start
 * refuses and says what the rename costs and how to do it.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql'
import { levenshtein } from '../core/registry/suggest.js'
import { DOCUMENT_COLUMN_PREFIX } from './search-sql.js'

export interface RenamedField {
  readonly module: string
  readonly table: string
  /** The column no field uses any more. */
  readonly from: string
  /** The new field's column. */
  readonly to: string
  /** Whether the old column holds encrypted values (a blind index beside it, or a stored ciphertext). */
  readonly encrypted: boolean
  /** Whether it has a blind index column (`<from>_bidx`) to rename with it. */
  readonly blindIndex: boolean
  /** Stored versions (history, or live rows) whose seal names the old field. */
  readonly sealedValues: number
}

const BIDX = '_bidx'

export function quoteIdent (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** The statements that rename the column (and its blind index); the next start renames the indexes. */
export function renameStatements (r: RenamedField): string[] {
  const table = quoteIdent(r.table)
  const out = [`ALTER TABLE ${table} RENAME COLUMN ${quoteIdent(r.from)} TO ${quoteIdent(r.to)}`]
  if (r.blindIndex) out.push(`ALTER TABLE ${table} RENAME COLUMN ${quoteIdent(r.from + BIDX)} TO ${quoteIdent(r.to + BIDX)}`)
  return out
}

/** Pairs each new column with the closest old one (by name), as long as both remain. */
function pair (old: string[], added: string[]): Array<[string, string]> {
  const candidates = old.flatMap((o) => added.map((a) => [o, a, levenshtein(o, a)] as const)).sort((x, y) => x[2] - y[2])
  const out: Array<[string, string]> = []
  const used = new Set<string>()
  for (const [o, a] of candidates) {
    if (used.has(o) || used.has(a)) continue
    used.add(o).add(a)
    out.push([o, a])
  }
  return out
}

/** The renamed fields of every module table that exists in the database. */
export async function findRenames (orm: MikroORM, em: EntityManager): Promise<RenamedField[]> {
  const run = async <T>(sql: string, params: unknown[] = []): Promise<T[]> =>
    em.getConnection().execute<T[]>(sql, params, 'all', em.getTransactionContext())
  const stored = await run<{ table: string, column: string }>(
    'select table_name as "table", column_name as "column" from information_schema.columns where table_schema = current_schema()')
  const byTable = new Map<string, Set<string>>()
  for (const s of stored) (byTable.get(s.table) ?? byTable.set(s.table, new Set()).get(s.table)!).add(s.column)
  const hasHistory = byTable.has('sys_historial')
  const out: RenamedField[] = []
  for (const meta of Object.values(orm.getMetadata().getAll())) {
    const columns = byTable.get(meta.tableName)
    // Module entities are `mod_<module>` (db/module-entity.ts); the service's own tables are not compared.
    if (columns === undefined || !meta.className.startsWith('mod_')) continue
    const module = meta.className.slice('mod_'.length)
    const declared = new Set(Object.values(meta.properties).flatMap((p) => p.fieldNames ?? []))
    const derived = (c: string): boolean => c.startsWith(DOCUMENT_COLUMN_PREFIX) || c.endsWith(BIDX)
    const old = [...columns].filter((c) => !declared.has(c) && !c.startsWith(DOCUMENT_COLUMN_PREFIX) && !(c.endsWith(BIDX) && columns.has(c.slice(0, -BIDX.length))))
    const added = [...declared].filter((c) => !columns.has(c) && !derived(c))
    for (const [from, to] of pair(old, added)) {
      const col = quoteIdent(from)
      const [live] = await run<{ n: string | number, encrypted: boolean }>(
        `select count(${col}) as n, coalesce(bool_or(${col}::text ~ '^v1:[0-9a-f]{8}:'), false) as encrypted from ${quoteIdent(meta.tableName)}`)
      const [versions] = hasHistory
        ? await run<{ n: string | number }>(
          // A version's row is in its entry's `datos` (older entries) or the next entry's `anterior` (docs/decisions.md "Each version stored once").
          "select count(*) as n from sys_historial where modulo = ? and jsonb_exists(coalesce(datos, anterior), ?) and (sello = 1 or coalesce(datos, anterior) -> ? <> 'null'::jsonb)",
          [module, from, from])
        : [{ n: 0 }]
      const blindIndex = columns.has(from + BIDX)
      out.push({
        module,
        table: meta.tableName,
        from,
        to,
        encrypted: blindIndex || live!.encrypted,
        blindIndex,
        // The live row holds each record's newest version, the history the ones before it (docs/decisions.md
        // "Each version stored once"); a record last written before that change also has its newest in its entry's `datos`, counted twice.
        sealedValues: Number(live!.n) + Number(versions!.n),
      })
    }
  }
  return out
}
