/**
 * An export's body (docs/user-guide.md "Export (exportar)"): every row a
 * cursor reads (db/row-cursor.ts), turned into API records a batch at a
 * time by the caller's records service (decrypted or withheld, and each
 * batch's decrypted reads logged in one insert before it leaves), written
 * as CSV (records/csv-dialect.ts) or NDJSON. In constant memory with
 * backpressure: the next batch is fetched only once the records of the
 * last one were taken by the writer, which takes them as the socket
 * drains. Destroying the stream (the client went away: Fastify destroys
 * a stream payload whose response closed) ends the generator, whose
 * `finally` closes the cursor.
 */
import { pipeline, Readable, Transform } from 'node:stream'
import type { ModuleDef } from '../core/registry/types.js'
import type { RowCursor } from '../db/row-cursor.js'
import type { Row } from '../db/module-entity.js'
import { csvWriter } from './csv-dialect.js'
import { selectable, type FieldSelection } from './fields-query.js'
import type { ExportFormat, ExportQuery } from './export-query.js'

type ApiRecord = Record<string, unknown>

/** What the route sends: the body and how to name it. */
export interface ExportAnswer {
  stream: Readable
  contentType: string
  /** `denuncias-2026-11-25.csv`: the module and today in the service time zone. */
  filename: string
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
}

/**
 * The keys of a module's API record in order, encrypted fields included
 * (withheld: an empty cell), and `_restringidos` when some record may be
 * withheld (a CSV's header; records/view-builder.ts writes the same order).
 * With `campos`, `_id` and the fields named, in the same order.
 */
export function recordColumns (mod: ModuleDef, withRestricted: boolean, fields?: FieldSelection): string[] {
  return [...(fields?.names ?? selectable(mod)), ...(withRestricted ? ['_restringidos'] : [])]
}

async function * records (cursor: RowCursor, views: (rows: Row[]) => Promise<ApiRecord[]>): AsyncGenerator<ApiRecord> {
  try {
    for (let rows = await cursor.next(); rows.length > 0; rows = await cursor.next()) {
      yield * await views(rows)
    }
  } finally {
    await cursor.close()
  }
}

const ndjsonWriter = (): Transform => new Transform({
  writableObjectMode: true,
  transform (record: ApiRecord, _encoding, done) { done(null, `${JSON.stringify(record)}\n`) },
})

/** The export's body: `columns` are the CSV header (and the keys a CSV row takes from each record). */
export function exportBody (cursor: RowCursor, views: (rows: Row[]) => Promise<ApiRecord[]>, columns: readonly string[], q: Pick<ExportQuery, 'format' | 'separator'>): Readable {
  const writer = q.format === 'csv' ? csvWriter(columns, q.separator) : ndjsonWriter()
  // An error (or the client gone) destroys every stream of the chain: the writer ends the response, the source its cursor.
  return pipeline(Readable.from(records(cursor, views)), writer, () => undefined)
}
