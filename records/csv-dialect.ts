/**
 * The CSV dialect an export writes (docs/user-guide.md "Export (exportar)")
 * and an import reads back (docs/user-guide.md "Import (importar)"):
 * RFC 4180 (CRLF between records, a field quoted when it holds the
 * separator, a quote or a line break, quotes doubled), UTF-8 with a
 * byte-order mark (spreadsheets then read accents right; an import takes it
 * or not), a header row of field names, `,` or `;` between fields (`;` for
 * spreadsheets set to Spanish, whose decimal separator is the comma; an
 * import takes `separador` or finds it in the header line: `;` when it holds
 * a `;` and no `,`). Values as the API shows them: null an empty cell,
 * true/false, arrays and objects as JSON text. A text cell that would
 * start with `=`, `+`, `-`, `@`, a tab or a carriage return (after any
 * `'`) is prefixed with `'` so a spreadsheet does not run it as a formula;
 * a number stays a number (-5 is written -5), as csv-stringify's
 * `escape_formulas` does (also for the full-width forms of those signs).
 * With `;`, numbers have a decimal comma (`90,5`), as such a spreadsheet
 * writes them. An import removes the prefix, an empty cell is a field not
 * given, and a cell is converted to its field's JSON value, also as pandas
 * and spreadsheets write it (records/csv-cells.ts). Written by
 * records/csv-writer.ts and read by csv-parse, both as streams.
 */
import { Readable } from 'node:stream'
import { parse, CsvError } from 'csv-parse'
import { AppError } from '../core/errors.js'
import { MAX_LINE_BYTES } from './import-text.js'

export const SEPARATORS = [',', ';'] as const
export type Separator = typeof SEPARATORS[number]

/** The separator a header line uses. */
function separatorOf (headerLine: string): Separator {
  return headerLine.includes(';') && !headerLine.includes(',') ? ';' : ','
}

/**
 * The records of a CSV body's text (records/import-text.ts: decoded, in
 * pieces that end at a line break), each a list of cells, the header
 * first; the separator is found in the header line unless given, and
 * handed to `found` before the first record (a cell's conversion depends
 * on it: records/csv-cells.ts). A malformed file (a quote never closed, a
 * record over MAX_LINE_BYTES characters): 400 naming the line.
 */
export async function * csvRecords (input: AsyncIterable<string>, separador?: Separator, found?: (separator: Separator) => void): AsyncGenerator<string[]> {
  const source = input[Symbol.asyncIterator]()
  const head: string[] = []
  for (;;) {
    const next = await source.next()
    if (next.done === true) break
    head.push(next.value)
    if (next.value.includes('\n')) break
  }
  const firstLine = head.join('').replace(/^\uFEFF/, '').split(/\r?\n/)[0] ?? ''
  const delimiter = separador ?? separatorOf(firstLine)
  found?.(delimiter)
  const parser = parse({ bom: true, delimiter, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_LINE_BYTES, record_delimiter: ['\r\n', '\n', '\r'] })
  const feed = Readable.from((async function * () {
    yield * head
    for (;;) {
      const next = await source.next()
      if (next.done === true) return
      yield next.value
    }
  })())
  feed.on('error', (err) => parser.destroy(err))
  feed.pipe(parser)
  try {
    for await (const record of parser) yield record as string[]
  } catch (err) {
    if (err instanceof CsvError) {
      const line = String((err as { lines?: number }).lines ?? '?')
      if (err.code === 'CSV_MAX_RECORD_SIZE') throw new AppError('DATOS_INVALIDOS', [{ campo: 'body', mensaje: `el registro CSV de la línea ${line} supera el máximo de ${MAX_LINE_BYTES} caracteres` }])
      throw new AppError('DATOS_INVALIDOS', [{ campo: 'body', mensaje: `CSV mal formado cerca de la línea ${line}` }])
    }
    throw err
  } finally {
    feed.destroy()
    parser.destroy()
  }
}
