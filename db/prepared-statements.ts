/**
 * Which queries run as named prepared statements, and under which name.
 *
 * MikroORM inlines every value into the SQL text, so PostgreSQL parses and
 * plans each query anew. With a module table's two dozen partial indexes,
 * planning a GET by id cost 0.25–0.4 ms of PostgreSQL's CPU against
 * 0.05 ms to run it (issue 10). A named statement is parsed once per
 * connection, and after five executions PostgreSQL may keep a generic plan
 * for it.
 *
 * A query qualifies when its values are plain scalars (strings, numbers,
 * booleans, null, dates) and its text has no identifier placeholder (`??`),
 * no escaped `?`, no search operator and no ordered page. Those two are
 * left to a custom plan for every query, because how many rows the values
 * match, and where, decides their best plan: a text search or a substring
 * match (SPEC S12's 50 ms), and `order by … limit`, where a generic plan
 * walked the default order's index through 20,000 fresh rows of one
 * category to find 20 of another (12 ms instead of 1). Counts, reads by
 * key and writes keep one plan. The name is a hash of the text; `limit`
 * names at most, so texts that vary without end (an `in` list of every
 * length) cannot grow the server's memory.
 */
import { createHash } from 'node:crypto'

/** Search operators whose plan depends on the pattern: `@@` (full text), `%`/`ilike`/`like` (trigram, substring). */
const PATTERN_DEPENDENT = /@@|\bi?like\b|%|search_fold\(/i
/** A page in an order (`order by … limit`): which index serves it depends on how many rows the values match and where they lie. */
const ORDERED_PAGE = /\border by\b[\s\S]*\blimit\b/i

export class PreparedStatements {
  private readonly names = new Map<string, string>()
  /** Texts PostgreSQL refused to prepare (a parameter whose type it cannot infer): inlined from then on. */
  private readonly refused = new Set<string>()
  /** Bumped when the server dropped our statements' plans (see `forget`). */
  private generation = 0

  constructor (private readonly limit = 2_000) {}

  /** The values as sent to PostgreSQL (dates as ISO text), or undefined when one is not a plain scalar. */
  values (params: readonly unknown[]): unknown[] | undefined {
    const values = new Array<unknown>(params.length)
    for (let i = 0; i < params.length; i++) {
      const v = params[i]
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') values[i] = v
      else if (v instanceof Date) values[i] = v.toISOString()
      else return undefined
    }
    return values
  }

  /** The statement name of this text (numbered parameters), or undefined to leave it unnamed. */
  name (text: string): string | undefined {
    let name = this.names.get(text)
    if (name === undefined) {
      if (this.names.size >= this.limit || this.refused.has(text) || PATTERN_DEPENDENT.test(text) || ORDERED_PAGE.test(text)) return undefined
      name = `s${this.generation}_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`
      this.names.set(text, name)
    }
    return name
  }

  /** PostgreSQL could not prepare this text: run it inlined from now on. */
  refuse (sql: string): void {
    this.names.delete(sql)
    this.refused.add(sql)
  }

  /**
   * Every statement gets a new name: a column's type changed under them
   * (another instance widened it), and PostgreSQL refuses to run a cached
   * plan whose result type changed. The old statements stay prepared on
   * their connections, unused, until those close.
   */
  forget (): void {
    this.names.clear()
    this.generation++
  }
}
