/**
 * An export's body (docs/user-guide.md "Export (exportar)"): every row a
 * cursor reads (db/row-cursor.ts), turned into API records a batch at a
 * time by the caller's records service (decrypted or withheld, and each
 * batch's decrypted reads logged in one insert before it leaves), written
 * as CSV (records/csv-writer.ts) or NDJSON. In constant memory with
 * backpressure: the next batch is fetched only when the socket has taken
 * the text of the last one (docs/performance.md "Export of a million
 * rows"). Destroying the stream (the client went away: Fastify
 * destroys a stream payload whose response closed; or the end, or an
 * error) closes the cursor.
 */
import { Readable } from 'node:stream'
import type { ModuleDef } from '../core/registry/types.js'
import type { RowCursor } from '../db/row-cursor.js'
import type { Row } from '../db/module-entity.js'
import { csvHeader, csvLine } from './csv-writer.js'
import { selectable, type FieldSelection } from './fields-query.js'
import type { ExportFormat, ExportHeaders, ExportQuery } from './export-query.js'
import type { ApiRecord } from './records-service.js'

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

/** A CSV header's cells: with `etiquetas` each field's label (a system column keeps its name), else the columns' names. */
export function columnTitles (mod: ModuleDef, columns: readonly string[], headers: ExportHeaders): readonly string[] {
  return headers === 'etiquetas' ? columns.map((c) => mod.fieldMap.get(c)?.label ?? c) : columns
}

/** Text pushed at a time: a few socket writes per batch rather than one per record (each an HTTP chunk). */
const CHUNK = 16 * 1024

/**
 * The export's body: `columns` are the CSV header (and the keys a CSV row
 * takes from each record). One Readable that makes text straight from each
 * batch's records, and fetches the next batch only when asked for more
 * (`read`) once the last was written: nothing is held but one batch and
 * one chunk, and no promise or stream buffer per record.
 */
export function exportBody (cursor: RowCursor, views: (rows: Row[]) => Promise<ApiRecord[]>, columns: readonly string[], q: Pick<ExportQuery, 'format' | 'separator'> & { titles?: readonly string[] }): Readable {
  const line = q.format === 'csv' ? (r: ApiRecord): string => csvLine(r, columns, q.separator) : (r: ApiRecord): string => `${JSON.stringify(r)}\n`
  let text = q.format === 'csv' ? csvHeader(columns, q.separator, q.titles) : ''
  let batch: ApiRecord[] = []
  let next = 0
  let fetching = false
  return new Readable({
    read () {
      while (next < batch.length) {
        text += line(batch[next++]!)
        if (text.length < CHUNK && next < batch.length) continue
        // The batch is let go as soon as its last record is text.
        if (next === batch.length) batch = []
        const more = this.push(text)
        text = ''
        if (!more) return
      }
      if (fetching) return
      fetching = true
      void cursor.next().then(async (rows) => rows.length === 0 ? undefined : await views(rows)).then((records) => {
        fetching = false
        if (this.destroyed) return
        if (records === undefined) {
          if (text !== '') this.push(text)
          this.push(null)
        } else {
          batch = records
          next = 0
          this._read(CHUNK)
        }
      }, (err: Error) => this.destroy(err))
    },
    // At the end, on an error, or when the client went away (Fastify destroys a stream payload whose response closed).
    destroy (err, done) {
      cursor.close().then(() => done(err), (closeErr: Error) => done(err ?? closeErr))
    },
  })
}
