/**
 * records/csv-writer.ts alone: for any records, the export's CSV is byte
 * for byte what csv-stringify writes with the dialect's options (the
 * writer the export used before, records/csv-dialect.ts): quoting, doubled
 * quotes, line breaks, the formula prefix (full-width signs too, never on a
 * negative number, doubled after a `'`), booleans, numbers (a decimal comma
 * with `;`), arrays and objects as JSON, empty cells.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { stringify, type Options } from 'csv-stringify/sync'
import type { Separator } from '../../records/csv-dialect.js'
import { csvHeader, csvLine } from '../../records/csv-writer.js'

/**
 * The options the export gave csv-stringify, and what it adds: with `;` a
 * decimal comma, and a text whose formula sign follows some `'` takes one
 * more `'` (an import takes one off: docs/decisions.md "CSV as spreadsheets
 * write it").
 */
const stringifyOptions = (columns: string[], separator: Separator): Options => ({
  bom: true,
  header: true,
  columns,
  delimiter: separator,
  record_delimiter: '\r\n',
  quote_record_delimiter: true,
  escape_formulas: true,
  cast: {
    boolean: (v) => v ? 'true' : 'false',
    object: (v) => JSON.stringify(v),
    number: (v) => separator === ';' ? String(v).replace('.', ',') : String(v),
    string: (v) => /^'+[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(v) ? `'${v}` : v,
  },
})

const COLUMNS = ['_id', 'a', 'b', 'c', 'd', '_restringidos']
// The characters every rule turns on, and some ordinary ones.
const char = fc.constantFrom(',', ';', '"', '\r', '\n', '=', '+', '-', '@', '\t', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20', "'", 'a', 'ñ', ' ', '1', '.')
const cell = fc.oneof(
  fc.string({ unit: char, maxLength: 8 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.oneof(fc.string({ unit: char, maxLength: 4 }), fc.record({ nombre: fc.string({ unit: char, maxLength: 4 }) })), { maxLength: 3 }),
)
const record = fc.record(Object.fromEntries(COLUMNS.map((c) => [c, cell])))

describe('csv-writer', () => {
  for (const separator of [',', ';'] as const) {
    it(`writes what csv-stringify writes (separator ${separator})`, () => {
      fc.assert(fc.property(fc.array(record, { maxLength: 5 }), (records) => {
        const ours = csvHeader(COLUMNS, separator) + records.map((r) => csvLine(r, COLUMNS, separator)).join('')
        expect(ours).toBe(stringify(records, stringifyOptions(COLUMNS, separator)))
      }), { numRuns: 500 })
    })
  }

  it('the cases spelled out: a decimal comma only with `;`, a second `\'` only before a formula sign', () => {
    const cols = ['a', 'b', 'c', 'd']
    expect(csvLine({ a: 90.5, b: -5.25, c: 3, d: '90.5' }, cols, ';')).toBe('90,5;-5,25;3;90.5\r\n')
    expect(csvLine({ a: 90.5, b: -5.25, c: 3, d: '90.5' }, cols, ',')).toBe('90.5,-5.25,3,90.5\r\n')
    expect(csvLine({ a: '+34 612 345 678', b: "'+x", c: "'x", d: "''=y" }, cols, ',')).toBe("'+34 612 345 678,''+x,'x,'''=y\r\n")
  })

  it('no record: the byte-order mark and the header', () => {
    expect(csvHeader(COLUMNS, ';')).toBe('\uFEFF_id;a;b;c;d;_restringidos\r\n')
  })
})
