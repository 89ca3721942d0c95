/**
 * A named statement's execution that asks PostgreSQL for its result
 * columns once per connection.
 *
 * node-postgres describes the result of every execution: it sends a
 * Describe message, PostgreSQL answers with a RowDescription, which is
 * parsed into field objects and turned into one parser per column; for a
 * record of 21 columns that was a sixth of a GET by id on the server
 * (`perf`). A named statement's result shape cannot change while it
 * exists: PostgreSQL refuses to run it instead ("cached plan must not
 * change result type", which db/driver.ts answers by renaming its
 * statements). So the first execution of a name on a connection is
 * described as always and its shape kept; the next ones send Bind,
 * Execute and Sync only and read their rows with the kept shape.
 *
 * This reaches into node-postgres's Query and Result (`_result`,
 * `_parsers`, `_prebuiltEmptyResultObject`, `_accumulateRows`,
 * `hasBeenParsed`, `_getRows`), pinned by package-lock.json;
 * test/integration/known-shape.test.ts runs it against PostgreSQL.
 */
import pg from 'pg'

/** What a Result derives from a RowDescription, for one statement name. */
interface Shape {
  types: unknown
  fields: unknown[]
  parsers: unknown[]
  empty: object
}

/** The shapes of one connection's statements, by name. */
export type Shapes = Map<string, Shape>

interface ResultInternals {
  fields: unknown[]
  _types: unknown
  _parsers: unknown[]
  _prebuiltEmptyResultObject: object
}
interface Connection {
  bind (config: { portal: string, statement: string, values: unknown[], binary: boolean, valueMapper: unknown }): void
  sync (): void
}
interface QueryInternals {
  name: string
  portal: string
  values: unknown[]
  binary: boolean
  rows: number | undefined
  _result: ResultInternals
  _accumulateRows: boolean
  hasBeenParsed (connection: Connection): boolean
  prepare (connection: Connection): void
  handleRowDescription (message: unknown): void
  handleError (err: unknown, connection: Connection): void
  _getRows (connection: Connection, rows: number | undefined): void
}

const base = pg.Query.prototype as unknown as QueryInternals
// node-postgres maps each value to its wire text with this (lib/utils.js), as its own prepare does.
const prepareValue = (pg as unknown as { utils?: { prepareValue?: unknown } }).utils?.prepareValue

export interface QueryOutcome {
  rows: Array<Record<string, unknown>>
  rowCount: number | null
}

/** At most this many shapes per connection; past it the connection starts over (a shape is only a saved Describe). */
const SHAPE_LIMIT = 4_000

class KnownShapeQuery extends pg.Query {
  constructor (config: pg.QueryConfig & { name: string }, private readonly shapes: Shapes, callback: (err: Error | undefined, result: QueryOutcome) => void) {
    super(config, callback as never)
  }

  prepare (connection: Connection): void {
    const self = this as unknown as QueryInternals
    const result = self._result
    const shape = this.shapes.get(self.name)
    if (shape === undefined || shape.types !== result._types || !self.hasBeenParsed(connection)) {
      base.prepare.call(self, connection)
      return
    }
    try {
      connection.bind({ portal: self.portal, statement: self.name, values: self.values, binary: self.binary, valueMapper: prepareValue })
    } catch (err) {
      // Nothing was written (the message is built before it is sent); the statement stays, unlike after a failed first Parse.
      connection.sync()
      self.handleError(err, connection)
      return
    }
    result.fields = shape.fields
    result._parsers = shape.parsers
    result._prebuiltEmptyResultObject = shape.empty
    self._accumulateRows = true
    self._getRows(connection, self.rows)
  }

  handleRowDescription (message: unknown): void {
    const self = this as unknown as QueryInternals
    base.handleRowDescription.call(self, message)
    // Without node-postgres's value mapper a kept shape could not be used: keep none.
    if (prepareValue === undefined) return
    const result = self._result
    if (this.shapes.size >= SHAPE_LIMIT) this.shapes.clear()
    this.shapes.set(self.name, { types: result._types, fields: result.fields, parsers: result._parsers, empty: result._prebuiltEmptyResultObject })
  }
}

/** Runs a named statement on a node-postgres client, describing its result only the first time the client runs that name. */
export function queryKnownShape (client: pg.ClientBase, config: pg.QueryConfig & { name: string }, shapes: Shapes): Promise<QueryOutcome> {
  return new Promise((resolve, reject) => {
    void client.query(new KnownShapeQuery(config, shapes, (err, result) => { if (err) reject(err); else resolve(result) }))
  })
}
