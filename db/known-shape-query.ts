/**
 * A named statement's execution that asks PostgreSQL for its result columns
 * once per connection, written against node-postgres's documented extension
 * point: an object with `submit(connection)` handed to `client.query` (a
 * "Submittable", as pg-cursor and pg-query-stream are), which writes the
 * protocol messages itself with the connection's `parse`, `bind`,
 * `describe`, `execute` and `sync`, and is handed the backend's answers
 * (`handleRowDescription`, `handleDataRow` …).
 *
 * node-postgres's own Query describes the result of every execution
 * (Describe, RowDescription, the fields parsed, a parser looked up per
 * column): a sixth of a GET by id on the server (docs/performance.md). A
 * named statement's result shape cannot change while it exists: PostgreSQL
 * refuses to run it instead ("cached plan must not change result type",
 * which db/driver.ts answers by renaming its statements). So the first
 * execution of a name on a connection is described and its shape kept; the
 * next ones send Bind, Execute and Sync only.
 *
 * Whether a name is already parsed on the connection is node-postgres's
 * `parsedStatements` (set when PostgreSQL confirms the Parse; its own
 * Query reads it the same way). test/integration/named-statements.test.ts
 * runs this against PostgreSQL.
 */

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
export interface ProtocolConnection {
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

export class KnownShapeQuery {
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

/** Runs a named statement on a node-postgres client, describing its result only the first time the client runs that name. */
export function queryKnownShape (client: { query (submittable: KnownShapeQuery): unknown }, config: { name: string, text: string, values: unknown[], types: TypeParsers }, shapes: Shapes): Promise<QueryOutcome> {
  return new Promise((resolve, reject) => {
    client.query(new KnownShapeQuery(config.name, config.text, config.values.map(wireText), config.types, shapes, (err, result) => { if (err !== undefined) reject(err); else resolve(result!) }))
  })
}
