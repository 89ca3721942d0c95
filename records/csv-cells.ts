/**
 * An import's CSV cell as its field's JSON value (docs/user-guide.md
 * "Import (importar)"): what the export writes, and what pandas and a
 * spreadsheet write by default (docs/decisions.md "CSV as spreadsheets
 * write it"): `3.0` for an integer (pandas writes an integer column with a
 * gap as floats), `True`/`False` and `VERDADERO`/`FALSO` for booleans,
 * a date-time with an offset after a space (`2026-06-01 10:00:00+02:00`,
 * pandas' form of ISO 8601), a list as Python writes it (`['a', 'b']`).
 * In a file separated by `;` (a spreadsheet set to Spanish), numbers may
 * have a decimal comma (`90,5`) and dates the Spanish order
 * (`01/06/2026`, `01/06/2026 10:00`). The export's formula guard is undone:
 * a `'` before `=`, `+`, `-`, `@`, a tab or a carriage return (after any
 * further `'`) is dropped, so `'+34 612 345 678` reads `+34 612 345 678`
 * and `''+x` (the export of `'+x`) reads `'+x`. What the cell then holds is
 * validated as a POST's body is. Pure.
 */
import type { ErrorDetail } from '../core/errors.js'
import type { FieldDef } from '../core/registry/types.js'
import type { Separator } from './csv-dialect.js'
import { pythonList } from './python-literal.js'

/** What the export prefixes with `'` (records/csv-writer.ts): one `'` comes off. */
export const FORMULA_GUARDED = /^'+[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/

const NUMBER = { ',': /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/, ';': /^-?\d+([.,]\d+)?([eE][+-]?\d+)?$/ } as const
const TRUE = new Set(['true', 'verdadero'])
const FALSE = new Set(['false', 'falso'])
/** pandas' date-time with an offset: ISO 8601 with a space for the `T`. */
const SPACED_ISO = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))$/
/** A spreadsheet set to Spanish: day, month, year, and for a date-time hours and minutes (seconds optional). */
const SPANISH_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/
const SPANISH_DATETIME = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))?$/

type Converted = { value: unknown } | { problem: ErrorDetail }

const two = (n: string): string => n.padStart(2, '0')

/** A number cell's value: a decimal comma only in a `;` file. */
function numberOf (text: string, separator: Separator): number | undefined {
  if (!NUMBER[separator].test(text)) return undefined
  const n = Number(text.replace(',', '.'))
  // `1e400` would be Infinity, which no column holds.
  return Number.isFinite(n) ? n : undefined
}

/** `dd/mm/aaaa [hh:mm[:ss]]` in the service's own form (validated later, as a POST's). */
function spanishDate (text: string, withTime: boolean): string | undefined {
  const m = (withTime ? SPANISH_DATETIME : SPANISH_DATE).exec(text)
  if (m === null) return undefined
  const date = `${m[3]!}-${two(m[2]!)}-${two(m[1]!)}`
  return withTime ? `${date} ${two(m[4]!)}:${m[5]!}:${m[6] ?? '00'}` : date
}

/** A list from JSON text or Python's; undefined when it is neither. */
function listOf (text: string): unknown[] | undefined {
  try {
    const value = JSON.parse(text) as unknown
    return Array.isArray(value) ? value : undefined
  } catch {
    return pythonList(text)
  }
}

/** A cell's JSON value for its field, or the problem (a validation problem of that field). */
export function cellValue (f: FieldDef, cell: string, separator: Separator): Converted {
  const text = FORMULA_GUARDED.test(cell) ? cell.slice(1) : cell
  const problem = (mensaje: string): Converted => ({ problem: { campo: f.name, mensaje } })
  const decimalComma = separator === ';'
  switch (f.type) {
    case 'integer': {
      const n = numberOf(text, separator)
      return n !== undefined && Number.isInteger(n) ? { value: n } : problem('debe ser un número entero')
    }
    case 'decimal': {
      const n = numberOf(text, separator)
      return n !== undefined ? { value: n } : problem(decimalComma ? 'debe ser un número (con coma o punto decimal)' : 'debe ser un número (con punto decimal)')
    }
    case 'boolean': {
      const lower = text.toLowerCase()
      if (TRUE.has(lower)) return { value: true }
      if (FALSE.has(lower)) return { value: false }
      return problem('debe ser true o false (también True/False o VERDADERO/FALSO)')
    }
    case 'datetime': {
      const spaced = SPACED_ISO.exec(text)
      if (spaced !== null) return { value: `${spaced[1]!}T${spaced[2]!}` }
      return { value: (decimalComma ? spanishDate(text, true) : undefined) ?? text }
    }
    case 'date': return { value: (decimalComma ? spanishDate(text, false) : undefined) ?? text }
    case 'array':
    case 'file': {
      const list = listOf(text)
      return list !== undefined ? { value: list } : problem('debe ser una lista en JSON')
    }
    default: return { value: text }
  }
}
