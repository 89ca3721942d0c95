/**
 * MikroORM's PostgreSQL driver with two changes.
 *
 * Queries run as named prepared statements where that is safe
 * (db/prepared-statements.ts), and `rows()` runs the records layer's own
 * SQL (db/row-query.ts) the same way: PostgreSQL then parses a query once
 * per connection instead of planning every text with its values inlined.
 * A named statement runs on the pooled connection itself and is described
 * once per connection; an unnamed one through node-postgres's query config.
 * What that takes below knex's and node-postgres's documented APIs is in
 * db/driver-internals.ts, and nowhere else.
 *
 * A BEGIN that fails throws its own error. A pooled connection can be dead before the pool knows it: PostgreSQL
 * shut down or restarted, and the socket's end has not been read yet. knex
 * then hands back a transaction that is already closed, whose first query
 * fails with "Transaction query already complete" — a text that says
 * nothing about the database, which became a 500. Here such a BEGIN throws
 * the driver's error instead ("Connection terminated unexpectedly", 57P01,
 * ECONNRESET …), which the error mapping (http/database-unavailable.ts)
 * answers with 503; knex has by then marked the connection, and the pool
 * replaces it.
 */
import { Utils, type AnyEntity, type Configuration, type EntityData, type LoggingOptions } from '@mikro-orm/core'
import { AbstractSqlDriver, PostgreSqlConnection, PostgreSqlPlatform, type Knex, type QueryResult } from '@mikro-orm/postgresql'
import { isStalePlan, isSyntaxError, isUnknownStatement, isUntypedParameter } from '../core/postgres-errors.js'
import { PreparedStatements } from './prepared-statements.js'
import { ServicePlatform } from './service-platform.js'
import type { SessionStatements } from './session-statements.js'
import { acquireConnection, announceQuery, queryKnownShape, releaseConnection, notBegun, type AnnouncedQuery, type PooledConnection, type QueryOutcome, type Shapes, type TypeParsers } from './driver-internals.js'

type BeginOptions = Parameters<PostgreSqlConnection['begin']>[0]
type Method = 'all' | 'get' | 'run'

/** A connection of the pool held by one caller (ServiceConnection.reserve). */
export interface ReservedConnection {
  query (text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>
  release (): Promise<void>
}

/** How many texts get a statement name and a cached numbering (db/prepared-statements.ts). */
const STATEMENT_LIMIT = 2_000

/** PostgreSQL's type oid of `timestamptz`. */
const TIMESTAMPTZ = 1184

/** node-postgres asks for a column's parser on every execution: one function for every instant column. */
const toDate = (text: string): Date => new Date(text)

export class ServiceConnection extends PostgreSqlConnection {
  private readonly statements = new PreparedStatements(STATEMENT_LIMIT)
  /**
   * Whether values are sent as parameters of named statements (prepared
   * once per connection). db/open.ts turns it off for PGlite: its socket
   * server serves every connection from one session, message by message,
   * so a statement named on one connection already exists for the next,
   * and the unnamed statement of one could be bound by another. There,
   * values stay inlined (one simple-protocol message per query).
   */
  namedStatements = true
  /**
   * PGlite: every connection is served by one database session, and while
   * one of them holds a transaction the others wait (@electric-sql/pglite-socket
   * serves only that connection's messages). So nothing long holds a
   * transaction there (db/row-cursor.ts). Set by db/open.ts.
   */
  oneSession = false
  /** PGlite: named statements prepared and run in SQL (db/session-statements.ts). Set by db/open.ts. */
  session?: SessionStatements
  /** How rows() reads values: as MikroORM's connection does, but instants as Dates already (what its mapping would make of them). */
  private rowTypes?: TypeParsers
  /** Result shapes of each pooled connection's named statements (db/driver-internals.ts). */
  private readonly shapes = new WeakMap<PooledConnection, Shapes>()

  /** MikroORM's type parsers, read once: getConnectionOptions() builds them anew on every call. */
  private baseTypes?: TypeParsers

  /** The type parsers MikroORM's connection reads values with (node-postgres's, with MikroORM's changes). */
  private connectionTypes (): TypeParsers {
    return this.baseTypes ??= this.getConnectionOptions().types as TypeParsers
  }

  /**
   * As MikroORM's, but a query whose values are plain scalars runs as a
   * named prepared statement (db/prepared-statements.ts) instead of with
   * its values inlined into the text.
   */
  override async execute<T extends QueryResult | EntityData<AnyEntity> | EntityData<AnyEntity>[] = EntityData<AnyEntity>[]> (queryOrKnex: string | Knex.QueryBuilder | Knex.Raw, params: unknown[] = [], method: Method = 'all', ctx?: Knex.Transaction | null, loggerContext?: LoggingOptions): Promise<T> {
    // A knex builder (MikroORM's virtual entities; the service passes none): MikroORM's own way.
    if (Utils.isObject(queryOrKnex)) return super.execute<T>(queryOrKnex, params, method, ctx ?? undefined, loggerContext)
    const sql = this.config.get('onQuery')(queryOrKnex, params)
    const plain = !sql.includes('??') && !sql.includes('\\?')
    // No values: nothing to gain, and a text of several statements can only run unprepared.
    const values = plain && params.length > 0 && (this.namedStatements || this.session !== undefined) ? this.statements.values(params) : undefined
    const statement = values === undefined ? undefined : this.statements.statement(sql)
    if (!this.namedStatements && plain) {
      // PGlite: a named statement as SQL's EXECUTE (db/session-statements.ts).
      const res = statement?.name === undefined ? undefined : await this.runInSession(statement.text, statement.name, values!, ctx, loggerContext)
      if (res !== undefined) return this.transformRawResult<T>(res, method)
      // Else the values inlined as MikroORM's own execute does, one simple-protocol message on the pooled
      // connection, without knex's runner (a tenth of an embedded create's CPU, docs/performance.md).
      return this.transformRawResult<T>((await this.run(params.length === 0 ? sql : this.platform.formatQuery(sql, params), [], undefined, ctx, loggerContext))!, method)
    }
    if (statement?.name === undefined) return super.execute<T>(sql, params, method, ctx ?? undefined, loggerContext)
    const res = await this.run(statement.text, values!, statement.name, ctx, loggerContext)
    return res === undefined ? super.execute<T>(sql, params, method, ctx ?? undefined, loggerContext) : this.transformRawResult<T>(res, method)
  }

  /**
   * Rows of SQL with numbered parameters (`$1`…) whose values are plain
   * scalars, keyed by column name, values as MikroORM maps them (instants
   * as Dates, dates and times as text, json parsed): a named prepared
   * statement when it qualifies, else a parameterized one. With named
   * statements off (PGlite) the values are inlined as MikroORM does, so
   * that the query is one message of the simple protocol. `onePlan`: the
   * caller knows one plan is right for every value of this text, though
   * it is an ordered page (db/prepared-statements.ts).
   */
  async rows (text: string, params: unknown[], ctx?: Knex.Transaction | null, onePlan = false): Promise<Array<Record<string, unknown>>> {
    this.rowTypes ??= this.readTypes()
    if (!this.namedStatements) {
      const values = this.session === undefined ? undefined : this.statements.values(params)
      const name = values === undefined ? undefined : this.statements.name(text, onePlan)
      const res = name === undefined ? undefined : await this.runInSession(text, name, values!, ctx, undefined, this.rowTypes)
      if (res !== undefined) return res.rows
      const inlined = text.replace(/\$(\d+)/g, (_, i: string) => this.platform.quoteValue(params[Number(i) - 1]))
      return (await this.run(inlined, [], undefined, ctx, undefined, this.rowTypes))!.rows
    }
    const values = this.statements.values(params)
    if (values === undefined) throw new TypeError('rows() takes scalar values only')
    const res = await this.run(text, values, this.statements.name(text, onePlan), ctx, undefined, this.rowTypes)
    return res === undefined ? (await this.run(text, values, undefined, ctx, undefined, this.rowTypes))!.rows : res.rows
  }

  /** Instants as Dates, the rest as MikroORM's connection reads them. */
  private readTypes (): TypeParsers {
    const base = this.connectionTypes()
    return { getTypeParser: (oid, format) => oid === TIMESTAMPTZ ? toDate : base.getTypeParser(oid, format) }
  }

  /**
   * A pooled connection kept until `release` (db/row-cursor.ts: an
   * export's snapshot and cursor), whose rows read as rows()' do. Plain
   * parameterized statements: nothing is named on it.
   */
  async reserve (): Promise<ReservedConnection> {
    if (!this.connected) await this.ensureConnection()
    const knex = this.getKnex()
    const conn = await acquireConnection(knex)
    this.rowTypes ??= this.readTypes()
    const types = this.rowTypes
    return {
      async query (text, values = []) {
        announceQuery(knex, { sql: text, bindings: values })
        return (await conn.query({ text, values, types })).rows
      },
      release: async () => { await releaseConnection(knex, conn) },
    }
  }

  /**
   * One statement on the transaction's connection or a pooled one.
   * Undefined: PostgreSQL could not use the named statement (a parameter
   * it cannot type, a plan its table outgrew) and no transaction was
   * aborted by it; the caller runs the query another way. Neither can
   * happen to a statement the suite runs; should one reach production, the
   * text is never named again.
   */
  private async run (text: string, values: unknown[], name: string | undefined, ctx?: Knex.Transaction | null, loggerContext?: LoggingOptions, types?: TypeParsers, announced?: AnnouncedQuery | null): Promise<QueryOutcome | undefined> {
    if (!this.connected) await this.ensureConnection()
    const source = ctx ?? this.getKnex()
    const query = async (): Promise<QueryOutcome> => {
      const conn = await acquireConnection(source)
      if (announced !== null) announceQuery(source, announced ?? { sql: text, bindings: values, ...(name !== undefined && { name }) })
      try {
        if (name === undefined) return await conn.query({ text, values, ...(types !== undefined && { types }) })
        let shapes = this.shapes.get(conn)
        if (shapes === undefined) this.shapes.set(conn, shapes = new Map())
        return await queryKnownShape(conn, { name, text, values, types: types ?? this.connectionTypes() }, shapes)
      } finally {
        await releaseConnection(source, conn)
      }
    }
    const context = loggerContext === undefined ? { query: text, params: values } : { query: text, params: values, ...loggerContext }
    try {
      // MikroORM's wrapper only times the query for its query log: not worth a closure and two objects a query when that is off.
      return await (this.logger.isEnabled('query', context) ? this.executeQuery(text, query, context) : query())
    } catch (err) {
      if (name === undefined) throw err
      return this.unnamed(err, text, ctx)
    }
  }

  /** A text that cannot be named: run it unnamed, from now on too. */
  private refused (text: string): undefined {
    this.statements.refuse(text)
    return undefined
  }

  /**
   * After a named statement's error: undefined when the caller may run the
   * query another way (run() says when), the error thrown again otherwise.
   */
  private unnamed (err: unknown, text: string, ctx?: Knex.Transaction | null): undefined {
    if (isUntypedParameter(err)) this.statements.refuse(text)
    else if (isStalePlan(err)) this.statements.forget()
    else if (!isUnknownStatement(err)) throw err // PGlite: a PREPARE sent ahead failed (db/session-statements.ts)
    if (ctx) throw err
    return undefined
  }

  /**
   * PGlite: statement `name` of `text` run as SQL's EXECUTE, after its
   * PREPARE the first time (db/session-statements.ts), announced as a named
   * statement is on PostgreSQL; the PREPARE is not announced, as the Parse of
   * a named statement is not. Undefined as run()'s, or when the statement
   * cannot run prepared yet.
   */
  private async runInSession (text: string, name: string, values: unknown[], ctx?: Knex.Transaction | null, loggerContext?: LoggingOptions, types?: TypeParsers): Promise<QueryOutcome | undefined> {
    const session = this.session!
    const sessionName = session.name(name)
    const step = session.next(sessionName, ctx != null)
    if (step === 'inline') return undefined
    try {
      if (step === 'prepare') {
        try {
          await this.run(session.prepare(sessionName, text), [], undefined, ctx, loggerContext, undefined, null)
        } catch (err) {
          session.prepareEnded(sessionName, false)
          // PREPARE takes a query or a write only (an EXPLAIN, a CALL are refused as syntax, where the protocol's Parse takes them).
          if (isSyntaxError(err) && !ctx) return this.refused(text)
          throw err
        }
        session.prepareEnded(sessionName, true)
      }
      return await this.run(session.execute(sessionName, values), [], undefined, ctx, loggerContext, types, { sql: text, bindings: values, name: sessionName })
    } catch (err) {
      return this.unnamed(err, text, ctx)
    }
  }

  override async begin (options: BeginOptions = {}): Promise<Knex.Transaction> {
    const trx = await super.begin(options)
    const failed = options.ctx === undefined ? notBegun(trx) : undefined
    if (failed !== undefined) await failed
    return trx
  }
}

/** MikroORM's PostgreSqlDriver (its platform, with literals quoted faster: db/service-platform.ts, and its dependencies), on the connection above. */
export class ServiceDriver extends AbstractSqlDriver<ServiceConnection, PostgreSqlPlatform> {
  constructor (config: Configuration) {
    super(config, new ServicePlatform(), ServiceConnection, ['knex', 'pg'])
  }
}
