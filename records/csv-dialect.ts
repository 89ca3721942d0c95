/**
 * The CSV an export writes (docs/user-guide.md "Export (exportar)") and an
 * import reads: RFC 4180 (CRLF between records, a field quoted when it
 * holds the separator, a quote or a line break, quotes doubled), UTF-8
 * with a byte-order mark (spreadsheets then read accents right), a header
 * row, `,` or `;` between fields (`;` for spreadsheets set to Spanish,
 * whose decimal separator is the comma). Values as the API shows them:
 * null an empty cell, true/false, arrays and objects as JSON text. A text
 * cell that would start with `=`, `+`, `-`, `@`, a tab or a carriage
 * return is prefixed with `'` so a spreadsheet does not run it as a
 * formula; a number stays a number (-5 is written -5). csv-stringify's
 * `escape_formulas` does exactly that (and also for the full-width forms
 * of those signs).
 */
import { stringify, type Options, type Stringifier } from 'csv-stringify'

export const SEPARATORS = [',', ';'] as const
export type Separator = typeof SEPARATORS[number]

/** The prefix a text cell that reads as a formula gets; an import removes it. */
export const FORMULA_PREFIX = "'"

/** The writer's options for `columns` (the header row, in order). */
export function csvOptions (columns: readonly string[], separator: Separator): Options {
  return {
    bom: true,
    header: true,
    columns: [...columns],
    delimiter: separator,
    record_delimiter: '\r\n',
    // Any line break in a value is quoted (csv-stringify quotes only its own record delimiter when one is set).
    quote_record_delimiter: true,
    escape_formulas: true,
    cast: {
      boolean: (v) => v ? 'true' : 'false',
      object: (v) => JSON.stringify(v),
    },
  }
}

/** A stream of API records in, CSV text out. */
export function csvWriter (columns: readonly string[], separator: Separator): Stringifier {
  return stringify(csvOptions(columns, separator))
}
