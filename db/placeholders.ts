/**
 * `?` placeholders (MikroORM's, and the search conditions' of
 * db/search-sql.ts) as PostgreSQL's `$n`, numbered on from `offset`.
 * A text without `?` comes back as it is.
 */
export function numberPlaceholders (sql: string, offset = 0): { text: string, count: number } {
  let count = 0
  const text = sql.replace(/\?/g, () => `$${offset + ++count}`)
  return { text, count }
}
