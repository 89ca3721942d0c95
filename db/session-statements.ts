/**
 * Named statements on the embedded database, where the extended protocol
 * is not safe: @electric-sql/pglite-socket serves every connection from one
 * PGlite session message by message, so one connection's Parse and Bind
 * can be split by another's (docs/decisions.md "Embedded: one connection").
 * There a text is prepared with SQL's PREPARE and run with EXECUTE, its
 * values written in as literals: each one message of the simple protocol,
 * which nothing can split. PostgreSQL then parses and plans an insert or a
 * read by key once instead of on every request (docs/performance.md
 * "The embedded default's statements").
 *
 * PGlite is one session, so a statement prepared on one connection serves
 * every connection, outlives a connection the pool replaced, and is gone
 * only with the database. Statements are not transactional: one prepared in
 * a transaction that rolls back stays. Names carry a tag of their instance:
 * two instances on one embedded database (the tests have them) each prepare
 * their own.
 */
import { randomBytes } from 'node:crypto'
import { quoteLiteral } from './service-platform.js'

/** What a caller does with a statement now (SessionStatements.next). */
export type SessionStep = 'execute' | 'prepare' | 'inline'

export class SessionStatements {
  private readonly tag = `e${randomBytes(4).toString('hex')}_`
  /** Statements whose PREPARE was sent: true once it succeeded. */
  private readonly prepared = new Map<string, boolean>()

  /** The session's name for a statement db/prepared-statements.ts named `name`. */
  name (name: string): string {
    return this.tag + name
  }

  /**
   * What to do with statement `name`: `prepare` it first when no PREPARE
   * was sent, else `execute` it. The embedded pool's one connection takes
   * queries in the order they were sent, so an EXECUTE sent after a PREPARE
   * runs after it, unless it runs in a transaction, which holds that
   * connection while the PREPARE waits for it: there a statement whose
   * PREPARE has not succeeded yet runs `inline`.
   */
  next (name: string, inTransaction: boolean): SessionStep {
    const done = this.prepared.get(name)
    if (done === undefined) return 'prepare'
    return done || !inTransaction ? 'execute' : 'inline'
  }

  /** The PREPARE of statement `name` of `text`; from now on the statement counts as sent. */
  prepare (name: string, text: string): string {
    this.prepared.set(name, false)
    return `prepare ${name} as ${text}`
  }

  /** Statement `name`'s PREPARE succeeded (true) or failed (false: it is sent again next time). */
  prepareEnded (name: string, ok: boolean): void {
    if (ok) this.prepared.set(name, true)
    else this.prepared.delete(name)
  }

  /**
   * The EXECUTE of statement `name` with `values` (plain scalars,
   * db/prepared-statements.ts `values`). Each value is a quoted literal, as
   * node-postgres sends a parameter in text (a number as its digits, a
   * boolean as `true`/`false`), so that PostgreSQL reads it with the
   * parameter type's own input function, as it reads a bound parameter.
   */
  execute (name: string, values: readonly unknown[]): string {
    let args = ''
    for (let i = 0; i < values.length; i++) {
      const v = values[i]
      args += (i === 0 ? '' : ', ') + (v === null ? 'null' : quoteLiteral(String(v)))
    }
    return values.length === 0 ? `execute ${name}` : `execute ${name}(${args})`
  }
}
