/**
 * The b-tree indexes of a module table that serve lists (docs/user-guide.md "Listing"), written
 * as SQL so they can be partial and composite (MikroORM compares
 * expression indexes by name, so a changed shape takes a new name):
 *
 * - one per indexed field (declared in modules.yaml or implied by its role:
 *   core/registry/index-keys.ts; a filter on any other field reads the
 *   table), over the live rows only and in the default
 *   order: `(col, _created, _id) where _deleted is null`
 *   (`<table>_<col>_live_idx`). A filtered list's first page in the
 *   default order (`-_created`, `_id`) is read straight off the index
 *   (its keys, then its rows), however broad the filter;
 * - one per indexed field over the same live rows with the value alone:
 *   `(col) where _deleted is null` (`<table>_<col>_count_idx`), which
 *   serves a filtered list's total as an index-only count (no heap visit
 *   to test `_deleted`). The value alone repeats, so PostgreSQL's b-tree
 *   deduplication keeps one entry per value and page with a list of row
 *   pointers: 10,000 rows of one value take about 9 index pages on the
 *   benchmark's table against 111 or more in the live index (whose every
 *   entry differs by `_created` and `_id`), and the count costs about half
 *   the CPU (docs/performance.md). It costs each create one more b-tree
 *   insertion per field;
 * - the default order itself, `(_created, _id)` (`<table>_created_id_idx`),
 *   over every row, so a list that includes deleted records keeps it;
 * - the deleted rows, `(_deleted) where _deleted is not null`
 *   (`<table>_deleted_idx`): few rows, so it costs a create nothing, and
 *   with it a filter over live *and* deleted rows (`incluir_eliminados`,
 *   written `_deleted is null or _deleted is not null`, records/list-query.ts)
 *   is still served by an index: a BitmapOr of the live index and this one.
 *
 * Unique fields keep their unique constraint (over every row: a deleted
 * record's unique value stays taken); blind indexes keep their own b-tree.
 * Names past PostgreSQL's 63 bytes are shortened with a hash (db/identifier.ts).
 */
import type { ModuleDef } from '../core/registry/types.js'
import { isIndexed, itemIndexColumn, searchableItems, valueColumn } from './columns.js'
import { storedName } from './identifier.js'

export interface RecordIndex {
  readonly name: string
  readonly expression: string
}

function ident (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** The condition every live-row index carries, and every query on live rows states. */
export const LIVE = `${ident('_deleted')} is null`

const liveColumns = new WeakMap<ModuleDef, ReadonlySet<string>>()

/** The columns with live indexes (the page's `(col, _created, _id)` and the count's `(col)`, both `where _deleted is null`): indexed, not unique (those keep their constraint). */
function liveIndexedColumns (mod: ModuleDef): ReadonlySet<string> {
  let columns = liveColumns.get(mod)
  if (columns === undefined) {
    columns = new Set(mod.fields.filter((f) => isIndexed(f) && !f.unique).map(valueColumn))
    liveColumns.set(mod, columns)
  }
  return columns
}

export function recordIndexes (mod: ModuleDef): RecordIndex[] {
  const table = ident(mod.table)
  const index = (full: string, body: string): RecordIndex => {
    const name = storedName(full)
    return { name, expression: `create index ${ident(name)} on ${table} ${body}` }
  }
  const out: RecordIndex[] = []
  for (const column of liveIndexedColumns(mod)) {
    out.push(index(`${mod.table}_${column}_live_idx`, `(${ident(column)}, "_created", "_id") where ${LIVE}`))
    out.push(index(`${mod.table}_${column}_count_idx`, `(${ident(column)}) where ${LIVE}`))
  }
  // A structured array's sub-field indexes: which records hold a value (a person's search, records/item-index.ts).
  for (const f of mod.fields) {
    if (searchableItems(f).length > 0) out.push(index(`${mod.table}_${itemIndexColumn(f)}_gin`, `using gin (${ident(itemIndexColumn(f))} jsonb_path_ops)`))
  }
  out.push(index(`${mod.table}_created_id_idx`, '("_created", "_id")'))
  out.push(index(`${mod.table}_deleted_idx`, '("_deleted") where "_deleted" is not null'))
  return out
}

/** One condition of a filter: `{ column: value }`. */
type Term = readonly [string, unknown]

/** The terms of a filter that is a conjunction of `{ column: value }` terms, or undefined. */
function terms (where: unknown, out: Term[] = []): Term[] | undefined {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return undefined
  for (const [key, value] of Object.entries(where)) {
    if (key === '$and') {
      if (!Array.isArray(value)) return undefined
      for (const part of value) if (terms(part, out) === undefined) return undefined
    } else if (key.startsWith('$')) {
      return undefined
    } else {
      out.push([key, value])
    }
  }
  return out
}

/** A value compared by equality (an operator object, an array or null is not). */
const isScalar = (v: unknown): boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date

/**
 * The column whose live index alone serves a page of `where` in `orderBy`,
 * whatever the value compared: `where` is the live rows and one equality on
 * a field with a live index, and the order is the default one (`_created`,
 * then `_id`, both ascending or both descending), which is the rest of that
 * index. Undefined for any other page.
 *
 * Such a page is read as its keys off that index (an index-only scan of the
 * value's entries, in order) and then its rows, so one plan is right for
 * every value and the statement may keep a generic plan (db/row-query.ts).
 * Read straight, the page's generic plan can walk the default order's index
 * instead, through every newer row of other values.
 */
export function liveIndexColumn (mod: ModuleDef, where: object, orderBy: ReadonlyArray<Record<string, string>> | undefined): string | undefined {
  const [first, second, ...more] = orderBy ?? []
  if (first === undefined || second === undefined || more.length > 0) return undefined
  const [created, id] = [Object.entries(first), Object.entries(second)]
  if (created.length !== 1 || id.length !== 1 || created[0]![0] !== '_created' || id[0]![0] !== '_id' || created[0]![1] !== id[0]![1]) return undefined
  const all = terms(where)
  if (all === undefined || all.length !== 2) return undefined
  const live = all.findIndex(([column, value]) => column === '_deleted' && value === null)
  if (live === -1) return undefined
  const [column, value] = all[1 - live]!
  if (!isScalar(value)) return undefined
  return liveIndexedColumns(mod).has(column) ? column : undefined
}
