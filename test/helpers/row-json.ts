/**
 * Rows written back from JSON in SQL (`jsonb_populate_record`), as tests
 * that tamper with or restore a table do: every stored column but the
 * generated ones (the search document), which PostgreSQL computes and
 * refuses to be given.
 */
type Query = (text: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>

/**
 * `insert into table (…) select … from jsonb_populate_record(null::table, <json>)`,
 * where `json` is SQL yielding the row as jsonb (a `$n` parameter or a subquery).
 */
export async function insertFromJson (query: Query, table: string, json: string, params: unknown[]): Promise<void> {
  const [row] = await query(
    "select string_agg(quote_ident(column_name), ', ' order by ordinal_position) as cols from information_schema.columns " +
    "where table_schema = current_schema() and table_name = $1 and is_generated = 'NEVER'", [table])
  const cols = String(row!.cols)
  await query(`insert into "${table}" (${cols}) select ${cols} from jsonb_populate_record(null::"${table}", ${json})`, params)
}
