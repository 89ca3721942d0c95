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

/** A condition's `?` placeholders numbered on from `params`, which receives its values; a TypeError when they do not match. */
export function numbered (c: { readonly sql: string, readonly params: readonly unknown[] }, params: unknown[]): string {
  const { text, count } = numberPlaceholders(c.sql, params.length)
  if (count !== c.params.length) throw new TypeError(`${c.params.length} values for ${count} placeholders: ${c.sql}`)
  params.push(...c.params)
  return text
}
