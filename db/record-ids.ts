/**
 * What the id sequences are seeded from (records/ids.ts): the highest
 * number among a module's stored ids of one year, so an id is never reused.
 */
import { queryRows, type Db } from './statement.js'

/** The highest `<n>` of the ids `<head><n>` stored in `table` (0 when there is none); `head` is `<prefix>-<year>-`. */
export async function highestIdNumber (db: Db, table: string, head: string): Promise<number> {
  const rows = await queryRows<{ max: string | null }>(db,
    `select max(cast(substring("_id" from ${head.length + 1}) as bigint)) as max from "${table}" where "_id" like ?`,
    [`${head}%`])
  return Number(rows[0]?.max ?? 0)
}
