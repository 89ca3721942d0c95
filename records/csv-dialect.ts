/**
 * The CSV an export writes, read back (docs/user-guide.md "Import
 * (importar)"): UTF-8 with or without a byte-order mark, RFC 4180 quoting,
 * a header row of field names, `,` or `;` between cells (`separador`, or
 * found in the header line: `;` when it holds a `;` and no `,`). A cell the
 * export prefixed with `'` (it started with `=`, `+`, `-`, `@`, a tab or a
 * carriage return: spreadsheet formula injection) loses the prefix; an
 * empty cell is a field not given; a cell is converted to its field's
 * JSON value (numbers, true/false, arrays as JSON text). Parsed by
 * csv-parse as a stream.
 */
import { Readable } from 'node:stream'
import { parse, CsvError } from 'csv-parse'
import { AppError, type ErrorDetail } from '../core/errors.js'
import type { FieldDef } from '../core/registry/types.js'

export type Separator = ',' | ';'

/** What the export prefixes with `'`. */
const FORMULA_START = /^'[=+\-@\t\r]/

const INTEGER = /^-?\d+$/
const DECIMAL = /^-?\d+(\.\d+)?$/

/** A cell's JSON value for its field, or the problem (a validation problem of that field). */
export function cellValue (f: FieldDef, cell: string): { value: unknown } | { problem: ErrorDetail } {
  const text = FORMULA_START.test(cell) ? cell.slice(1) : cell
  const problem = (mensaje: string): { problem: ErrorDetail } => ({ problem: { campo: f.name, mensaje } })
  switch (f.type) {
    case 'integer': return INTEGER.test(text) ? { value: Number(text) } : problem('debe ser un número entero')
    case 'decimal': return DECIMAL.test(text) ? { value: Number(text) } : problem('debe ser un número (con punto decimal)')
    case 'boolean': return text === 'true' || text === 'false' ? { value: text === 'true' } : problem('debe ser true o false')
    case 'array': {
      try {
        const value = JSON.parse(text) as unknown
        if (Array.isArray(value)) return { value }
      } catch { /* reported below */ }
      return problem('debe ser una lista en JSON')
    }
    default: return { value: text }
  }
}

/** The separator a header line uses. */
function separatorOf (headerLine: string): Separator {
  return headerLine.includes(';') && !headerLine.includes(',') ? ';' : ','
}

/**
 * The records of a CSV body, each a list of cells, the header first; the
 * separator is found in the header line unless given. A malformed file
 * (an unclosed quote): 400 naming the line.
 */
export async function * csvRecords (input: AsyncIterable<Buffer | string>, separador?: Separator): AsyncGenerator<string[]> {
  const source = input[Symbol.asyncIterator]()
  const head: Buffer[] = []
  for (;;) {
    const next = await source.next()
    if (next.done === true) break
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value
    head.push(chunk)
    if (chunk.includes(10)) break
  }
  const firstLine = Buffer.concat(head).toString('utf8').replace(/^\uFEFF/, '').split(/\r?\n/)[0] ?? ''
  const parser = parse({ bom: true, delimiter: separador ?? separatorOf(firstLine), relax_column_count: true, skip_empty_lines: true })
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
    if (err instanceof CsvError) throw new AppError('DATOS_INVALIDOS', [{ campo: 'body', mensaje: `CSV mal formado cerca de la línea ${String((err as { lines?: number }).lines ?? '?')}` }])
    throw err
  } finally {
    feed.destroy()
    parser.destroy()
  }
}
