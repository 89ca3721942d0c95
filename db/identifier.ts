/**
 * Names of indexes and constraints as PostgreSQL stores them. PostgreSQL
 * keeps the first 63 bytes of a name and drops the rest without an error
 * (NAMEDATALEN), so a long table and field name gave `<table>_<col>_live_idx`
 * and `<table>_<col>_count_idx` the same stored name: the second failed to
 * build, and the start-up sync, which compares names, never found either.
 * A name within 63 bytes is kept as it is (no existing name changes); a
 * longer one keeps its beginning and ends in 10 hex digits of the SHA-256
 * of the whole name, so every long name stays distinct and is the same on
 * every start.
 */
import { createHash } from 'node:crypto'
import { UnderscoreNamingStrategy } from '@mikro-orm/core'

export const MAX_IDENTIFIER_BYTES = 63
const HASH_LENGTH = 10

export function storedName (name: string): string {
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name
  const hash = createHash('sha256').update(name).digest('hex').slice(0, HASH_LENGTH)
  let head = ''
  for (const ch of name) {
    if (Buffer.byteLength(head + ch) > MAX_IDENTIFIER_BYTES - HASH_LENGTH - 1) break
    head += ch
  }
  return `${head}_${hash}`
}

/** MikroORM's default names (`<table>_<cols>_index`, `_unique`, `_pkey` …), kept within 63 bytes the same way. */
export class StoredNameStrategy extends UnderscoreNamingStrategy {
  override indexName (tableName: string, columns: string[], type: 'primary' | 'foreign' | 'unique' | 'index' | 'sequence' | 'check'): string {
    return storedName(super.indexName(tableName, columns, type))
  }
}
