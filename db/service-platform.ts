/**
 * MikroORM's PostgreSQL platform, inlining values faster where the
 * embedded database has them inlined into a query's text (db/driver.ts),
 * with the same text:
 *
 * - a string is quoted with two replaces instead of node-postgres's
 *   `escapeLiteral`, which builds the literal a character at a time
 *   (quotes and backslashes doubled, ` E` before a literal that holds a
 *   backslash). That loop made a fifth of an embedded create's garbage.
 * - a query's text is split at its `?` once, not searched again for every
 *   value of every execution.
 *
 * (docs/performance.md "At the edge at one connection; the embedded
 * default's literals")
 */
import { PostgreSqlPlatform } from '@mikro-orm/postgresql'

const QUOTE = /'/g
const BACKSLASH = /\\/g

/** A string as a PostgreSQL literal, exactly as node-postgres's `escapeLiteral` writes it. */
export function quoteLiteral (s: string): string {
  const quoted = s.includes("'") ? s.replace(QUOTE, "''") : s
  return s.includes('\\') ? ` E'${quoted.replace(BACKSLASH, '\\\\')}'` : `'${quoted}'`
}

/** Texts split at their placeholders, kept: a service runs a bounded set of texts (at most TEXTS_KEPT of them). */
const TEXTS_KEPT = 2_000

export class ServicePlatform extends PostgreSqlPlatform {
  private readonly pieces = new Map<string, readonly string[]>()

  override escape (value: unknown): string {
    return typeof value === 'string' ? quoteLiteral(value) : super.escape(value)
  }

  /** As MikroORM's: each `?` a value; `??` (an identifier) and `\\?` (a literal `?`) are left to it. */
  override formatQuery (sql: string, params: readonly unknown[]): string {
    if (params.length === 0) return sql
    let pieces = this.pieces.get(sql)
    if (pieces === undefined) {
      if (sql.includes('??') || sql.includes('\\?')) return super.formatQuery(sql, params as unknown[])
      pieces = sql.split('?')
      if (this.pieces.size < TEXTS_KEPT) this.pieces.set(sql, pieces)
    }
    if (pieces.length !== params.length + 1) return super.formatQuery(sql, params as unknown[])
    let out = pieces[0]!
    for (let i = 0; i < params.length; i++) out += this.quoteValue(params[i]) + pieces[i + 1]!
    return out
  }
}
