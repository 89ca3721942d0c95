/**
 * Which queries run as named prepared statements, and under which name.
 *
 * MikroORM inlines every value into the SQL text, so PostgreSQL parses and
 * plans each query anew; with a module table's two dozen partial indexes,
 * planning a GET by id costs PostgreSQL several times what running it does
 * (docs/performance.md "Figures behind the code's choices"). A named statement is parsed once per
 * connection, and after five executions PostgreSQL may keep a generic plan
 * for it.
 *
 * A query qualifies when its values are plain scalars (strings, numbers,
 * booleans, null, dates) and its text has no identifier placeholder (`??`),
 * no escaped `?`, no search operator and no ordered page. Those two are
 * left to a custom plan for every query, because how many rows the values
 * match, and where, decides their best plan: a text search or a substring
 * match (docs/user-guide.md "Search"), and `order by … limit`, where a generic plan
 * may walk the default order's index through thousands of rows of one
 * category to find 20 of another, unless its caller
 * says one plan serves every value (a page read by the keys of one index,
 * db/row-query.ts). Counts, reads by key and writes keep one plan. The
 * name is a hash of the text.
 *
 * One map from a query's text as given (MikroORM's, with `?`
 * placeholders, or the records layer's, already numbered) to the text
 * sent and its name, so a recurring query is numbered and named once. It
 * holds `limit` texts at most, so texts that vary without end (an `in`
 * list of every length) cannot grow the server's memory: past it, a text
 * is numbered anew on each run and left unnamed.
 */
import { createHash } from 'node:crypto'
import { numberPlaceholders } from './placeholders.js'
import { isoText } from '../core/time.js'

/** Search operators whose plan depends on the pattern: `@@` (full text), `%`/`ilike`/`like` (trigram, substring). */
const PATTERN_DEPENDENT = /@@|\bi?like\b|%|search_fold\(/i
/** A page in an order (`order by … limit`): which index serves it depends on how many rows the values match and where they lie. */
const ORDERED_PAGE = /\border by\b[\s\S]*\blimit\b/i

/** A query as sent: its text with numbered placeholders, and its statement name (undefined: unnamed). */
export interface Statement {
  readonly text: string
  readonly name: string | undefined
}

export class PreparedStatements {
  private readonly statements = new Map<string, Statement>()
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
      else if (v instanceof Date) values[i] = isoText(v)
      else return undefined
    }
    return values
  }

  /**
   * The query `sql` as sent: `?` placeholders numbered, and its name when it
   * qualifies. `onePlan`: an ordered page whose caller knows that one plan
   * serves every value (db/row-query.ts, a page read by the keys of one
   * index); the same text always comes with the same answer.
   */
  statement (sql: string, onePlan = false): Statement {
    let statement = this.statements.get(sql)
    if (statement === undefined) {
      const { text } = numberPlaceholders(sql)
      if (this.statements.size >= this.limit) return { text, name: undefined }
      const named = !this.refused.has(text) && !PATTERN_DEPENDENT.test(text) && (onePlan || !ORDERED_PAGE.test(text))
      statement = { text, name: named ? `s${this.generation}_${createHash('sha1').update(text).digest('hex').slice(0, 24)}` : undefined }
      this.statements.set(sql, statement)
    }
    return statement
  }

  /** The statement name of `sql`, or undefined to leave it unnamed. */
  name (sql: string, onePlan = false): string | undefined {
    return this.statement(sql, onePlan).name
  }

  /** PostgreSQL could not prepare this text (numbered): run it unnamed from now on. */
  refuse (text: string): void {
    this.refused.add(text)
    this.statements.clear() // rare (no query of the suite is refused): every other text is numbered and named again, the same way
  }

  /**
   * Every statement gets a new name: a column's type changed under them
   * (another instance widened it), and PostgreSQL refuses to run a cached
   * plan whose result type changed. The old statements stay prepared on
   * their connections, unused, until those close.
   */
  forget (): void {
    this.statements.clear()
    this.generation++
  }
}
