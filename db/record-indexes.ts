/**
 * The b-tree indexes of a module table that serve lists (SPEC S5), written
 * as SQL so they can be partial and composite (MikroORM compares
 * expression indexes by name, so a changed shape takes a new name):
 *
 * - one per filterable field, over the live rows only and in the default
 *   order: `(col, _created, _id) where _deleted is null`
 *   (`<table>_<col>_live_idx`). A filtered list's total is then an
 *   index-only count of the matching live rows (no heap visit to test
 *   `_deleted`), and its first page in the default order (`-_created`,
 *   `_id`) is read straight off the index, however broad the filter;
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
 */
import type { ModuleDef } from '../core/registry/types.js'
import { isIndexed, valueColumn } from './columns.js'

export interface RecordIndex {
  readonly name: string
  readonly expression: string
}

function ident (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** The condition every live-row index carries, and every query on live rows states. */
export const LIVE = `${ident('_deleted')} is null`

export function recordIndexes (mod: ModuleDef): RecordIndex[] {
  const table = ident(mod.table)
  const index = (name: string, body: string): RecordIndex => ({ name, expression: `create index ${ident(name)} on ${table} ${body}` })
  const out: RecordIndex[] = []
  for (const f of mod.fields) {
    if (!isIndexed(f) || f.unique) continue
    const column = valueColumn(f)
    out.push(index(`${mod.table}_${column}_live_idx`, `(${ident(column)}, "_created", "_id") where ${LIVE}`))
  }
  out.push(index(`${mod.table}_created_id_idx`, '("_created", "_id")'))
  out.push(index(`${mod.table}_deleted_idx`, '("_deleted") where "_deleted" is not null'))
  return out
}
