/**
 * The one file that relies on what knex and node-postgres do below their
 * documented APIs. Both are what make the driver (db/driver.ts) fast: a
 * query runs on the pooled connection itself, as a named statement whose
 * result is described once per connection (docs/decisions.md "Dependency
 * internals: one file" says what each buys and what a public path would
 * cost). Everything else reaches them through the small interface below.
 * The versions these assumptions were checked against are pinned exactly in
 * package.json (knex 3.2.10, pg 8.23.1, pg-protocol 1.16.1), and
 * test/integration/driver-internals-contract.test.ts checks every one of
 * them against the installed packages, naming the package and the
 * assumption when an upgrade breaks one.
 *
 * knex (the pool under MikroORM's connection):
 * - `client.acquireConnection()` lends a node-postgres Client of the pool,
 *   `client.releaseConnection(conn)` takes it back; on a transaction's
 *   client they give the transaction's own connection and leave it held.
 * - `client.emit('query', …)` reaches the listeners of knex's `query` event.
 * - `client.pool` is tarn's pool (`numUsed`, `numFree`, `numPendingAcquires`).
 * - A transaction whose BEGIN failed is handed back already completed, its
 *   `executionPromise` rejecting with BEGIN's error.
 *
 * node-postgres (pg and its protocol parser, pg-protocol):
 * - An object with `submit(connection)` given to `client.query` (a
 *   "Submittable", as pg-cursor is) is handed the connection's protocol
 *   writer (`parse`, `bind`, `describe`, `execute`, `sync`, `sendCopyFail`,
 *   `stream`), and then the backend's answers (`handleRowDescription`,
 *   `handleDataRow`, `handleCommandComplete`, `handleError`,
 *   `handleReadyForQuery` …) with pg-protocol's message shapes.
 * - `connection.parsedStatements[name]` is the text of a statement
 *   PostgreSQL confirmed parsing on that connection (pg's own Query reads
 *   it the same way).
 *
 * Why the shape is kept: node-postgres's own Query describes the result of
 * every execution (Describe, RowDescription, the fields parsed, a parser
 * looked up per column): a sixth of a GET by id on the server
 * (docs/performance.md). A named statement's result shape cannot change
 * while it exists: PostgreSQL refuses to run it instead ("cached plan must
 * not change result type", which db/driver.ts answers by renaming its
 * statements). So the first execution of a name on a connection is
 * described and its shape kept; the next ones send Bind, Execute and Sync.
 */
import type { Knex } from '@mikro-orm/postgresql'

/** Where a statement runs: the pool (a knex instance) or a transaction's connection. */
export type ConnectionSource = Knex | Knex.Transaction

/** A node-postgres Client lent by the pool; only its public query config is used outside this file. */
export interface PooledConnection {
  query (config: { text: string, values: unknown[], types?: TypeParsers }): Promise<QueryOutcome>
}

/** A statement as knex's `query` event reports it (test/helpers/sql-capture.ts listens). */
export interface AnnouncedQuery {
  sql: string
  bindings: unknown[]
  name?: string
}

/** The pool's connections: in use, idle, and requests waiting for one. */
export interface PoolCounts {
  used: number
  free: number
  pending: number
}

/** What this file reads of knex's client. */
interface KnexClient {
  emit (event: 'query', query: AnnouncedQuery): void
  acquireConnection (): Promise<PooledConnection>
  releaseConnection (conn: PooledConnection): Promise<unknown>
  pool?: { numUsed (): number, numFree (): number, numPendingAcquires (): number }
}

const clientOf = (source: ConnectionSource): KnexClient => source.client as unknown as KnexClient

/** A connection of the pool, or the transaction's own. Give it back with releaseConnection. */
export function acquireConnection (source: ConnectionSource): Promise<PooledConnection> {
  return clientOf(source).acquireConnection()
}

/** Back to the pool (a transaction keeps its connection until it ends). */
export function releaseConnection (source: ConnectionSource, conn: PooledConnection): Promise<unknown> {
  return clientOf(source).releaseConnection(conn)
}

/** As knex does for its own queries: whoever watches the queries (tests, debugging) sees these too. */
export function announceQuery (source: ConnectionSource, query: AnnouncedQuery): void {
  clientOf(source).emit('query', query)
}

/** The pool's counts, or undefined before the pool exists (not connected yet, or closed). */
export function poolCounts (knex: Knex): PoolCounts | undefined {
  const pool = clientOf(knex).pool
  return pool === undefined ? undefined : { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() }
}

/**
 * BEGIN's error when `trx` never opened, else undefined. A pooled
 * connection can be dead before the pool knows it; knex then sends BEGIN on
 * it, swallows the failure and hands back a transaction already closed,
 * whose first query would fail with "Transaction query already complete".
 */
export function notBegun (trx: Knex.Transaction): Promise<never> | undefined {
  if (!trx.isCompleted()) return undefined
  // executionPromise rejects with the error of BEGIN.
  return trx.executionPromise.then(() => { throw new Error('BEGIN did not open a transaction') })
}

/** Reads a column's text: node-postgres's type parsers (`types.getTypeParser`). */
export interface TypeParsers {
  getTypeParser (oid: number, format?: string): (text: string) => unknown
}

/** What a RowDescription says, for one statement name on one connection. */
interface Shape {
  readonly names: readonly string[]
  readonly parsers: ReadonlyArray<(text: string) => unknown>
}

/** The shapes of one connection's statements, by name. */
export type Shapes = Map<string, Shape>

/** The protocol writer node-postgres hands a Submittable (pg/lib/connection.js). */
interface ProtocolConnection {
  readonly parsedStatements: Readonly<Record<string, string | undefined>>
  parse (config: { text: string, name: string, types: unknown[] }): void
  bind (config: { portal: string, statement: string, values: Array<string | null>, binary: boolean }): void
  describe (config: { type: 'P', name: string }): void
  execute (config: { portal: string }): void
  sync (): void
  sendCopyFail (message: string): void
  readonly stream: { cork?: () => void, uncork?: () => void }
}

interface FieldDescription { name: string, dataTypeID: number, format?: string }

export interface QueryOutcome {
  rows: Array<Record<string, unknown>>
  rowCount: number | null
}

/** At most this many shapes per connection; past it the connection starts over (a shape is only a saved Describe). */
const SHAPE_LIMIT = 4_000
/** A statement that returns no rows (NoData): nothing to describe again. */
const NO_ROWS: Shape = { names: [], parsers: [] }

class KnownShapeQuery {
  readonly rows: Array<Record<string, unknown>> = []
  private rowCount: number | null = null
  private shape: Shape | undefined
  private described = false
  private failure: Error | undefined
  private done = false

  constructor (
    readonly name: string,
    readonly text: string,
    private readonly values: Array<string | null>,
    private readonly types: TypeParsers,
    private readonly shapes: Shapes,
    private readonly callback: (err: Error | undefined, result?: QueryOutcome) => void,
  ) {}

  submit (connection: ProtocolConnection): Error | null {
    const parsed = connection.parsedStatements[this.name]
    if (parsed !== undefined && parsed !== this.text) return new Error(`statement ${this.name} names another text`)
    this.shape = parsed === undefined ? undefined : this.shapes.get(this.name)
    connection.stream.cork?.()
    try {
      if (parsed === undefined) connection.parse({ text: this.text, name: this.name, types: [] })
      connection.bind({ portal: '', statement: this.name, values: this.values, binary: false })
      if (this.shape === undefined) {
        this.described = true
        connection.describe({ type: 'P', name: '' })
      }
      connection.execute({ portal: '' })
      connection.sync()
    } finally {
      connection.stream.uncork?.()
    }
    return null
  }

  handleRowDescription (msg: { fields: FieldDescription[] }): void {
    const shape = { names: msg.fields.map((f) => f.name), parsers: msg.fields.map((f) => this.types.getTypeParser(f.dataTypeID, f.format ?? 'text')) }
    this.keep(shape)
  }

  handleDataRow (msg: { fields: Array<string | null> }): void {
    const shape = this.shape
    if (shape === undefined || this.failure !== undefined) return
    const row: Record<string, unknown> = {}
    try {
      for (let i = 0; i < shape.names.length; i++) {
        const v = msg.fields[i]
        row[shape.names[i]!] = v === null || v === undefined ? null : shape.parsers[i]!(v)
      }
    } catch (err) {
      this.failure = err as Error
      return
    }
    this.rows.push(row)
  }

  handleCommandComplete (msg: { text: string }): void {
    // "SELECT 3", "INSERT 0 1", "UPDATE 2": the count is the last word.
    const count = Number(msg.text.slice(msg.text.lastIndexOf(' ') + 1))
    this.rowCount = Number.isInteger(count) ? count : null
    if (this.described && this.shape === undefined) this.keep(NO_ROWS)
  }

  handleEmptyQuery (): void {}
  handlePortalSuspended (): void {}

  handleCopyInResponse (connection: ProtocolConnection): void {
    connection.sendCopyFail('No source stream defined')
  }

  handleCopyData (): void {}

  handleError (err: Error): void {
    this.finish(err)
  }

  handleReadyForQuery (): void {
    this.finish(this.failure)
  }

  private keep (shape: Shape): void {
    this.shape = shape
    if (this.shapes.size >= SHAPE_LIMIT) this.shapes.clear()
    this.shapes.set(this.name, shape)
  }

  private finish (err: Error | undefined): void {
    if (this.done) return
    this.done = true
    if (err !== undefined) this.callback(err)
    else this.callback(undefined, { rows: this.rows, rowCount: this.rowCount })
  }
}

/** A value as the protocol's text: what node-postgres's own mapping makes of the scalars db/prepared-statements.ts lets through. */
const wireText = (v: unknown): string | null => v === null || v === undefined ? null : String(v)

/** Runs a named statement on a pooled connection, describing its result only the first time the connection runs that name. */
export function queryKnownShape (conn: PooledConnection, config: { name: string, text: string, values: unknown[], types: TypeParsers }, shapes: Shapes): Promise<QueryOutcome> {
  const client = conn as unknown as { query (submittable: KnownShapeQuery): unknown }
  return new Promise((resolve, reject) => {
    client.query(new KnownShapeQuery(config.name, config.text, config.values.map(wireText), config.types, shapes, (err, result) => { if (err !== undefined) reject(err); else resolve(result!) }))
  })
}
