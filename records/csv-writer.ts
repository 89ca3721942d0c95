/**
 * The export's CSV lines (records/csv-dialect.ts says what they hold):
 * byte for byte what csv-stringify writes with the options the export gave
 * it, with a cast for the decimal comma and the formula guard's own `'`
 * (test/unit/csv-writer.test.ts compares the two). Its own for cost:
 * csv-stringify makes about 11 KB of short-lived objects per record of 17
 * fields (a context, tuples and a concatenated copy of every value), most
 * of what an export allocated per row; here a record is one string built
 * from its cells, and a cell is copied only when it must be quoted
 * (docs/performance.md "Export of a million rows").
 */
import type { Separator } from './csv-dialect.js'

const BOM = '\uFEFF'
const RECORD_END = '\r\n'

/**
 * A text cell starting with one of these is prefixed with `'` (csv-stringify's
 * `escape_formulas`: full-width signs too), and so is one where they follow
 * some `'`: an import takes one `'` off (records/csv-cells.ts), so `'+x`
 * must leave as `''+x` to come back as itself.
 */
const FORMULA = /^'*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/

/** A cell as text: null/undefined empty, booleans true/false, numbers with the separator's decimal mark, objects and arrays JSON, a Date its epoch milliseconds (csv-stringify's default). */
function text (v: unknown, separator: Separator): string {
  switch (typeof v) {
    case 'string': return v
    // `;` is for spreadsheets set to Spanish, whose decimal mark is the comma.
    case 'number': return separator === ';' ? String(v).replace('.', ',') : String(v)
    case 'bigint': return String(v)
    case 'boolean': return v ? 'true' : 'false'
    case 'undefined': return ''
    default:
      if (v === null) return ''
      if (v instanceof Date) return String(v.getTime())
      return JSON.stringify(v)
  }
}

/** What makes a cell quoted, by separator: the separator, a quote or a line break. */
const QUOTED: Record<Separator, RegExp> = { ',': /[",\r\n]/, ';': /[";\r\n]/ }

/** One cell: formula-prefixed (but a negative number), quoted when it must be, quotes doubled. */
function cell (v: unknown, separator: Separator): string {
  let s = text(v, separator)
  if (s === '') return s
  const negative = (typeof v === 'number' || typeof v === 'bigint') && s.startsWith('-')
  if (!negative && FORMULA.test(s)) s = `'${s}`
  if (!QUOTED[separator].test(s)) return s
  return `"${s.includes('"') ? s.replaceAll('"', '""') : s}"`
}

/** One record's line: its cells in `columns` order, the record delimiter included. */
export function csvLine (record: Readonly<Record<string, unknown>>, columns: readonly string[], separator: Separator): string {
  let out = ''
  for (let i = 0; i < columns.length; i++) out += (i === 0 ? '' : separator) + cell(record[columns[i]!], separator)
  return out + RECORD_END
}

/** What comes first, also with no record: the byte-order mark and the header line (each column's name, or its title: a field's label). */
export function csvHeader (columns: readonly string[], separator: Separator, titles: readonly string[] = columns): string {
  return BOM + csvLine(Object.fromEntries(columns.map((c, i) => [c, titles[i]])), columns, separator)
}
