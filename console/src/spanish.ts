/**
 * Spanish formats, whatever the browser's language (docs/user-guide.md
 * "Console", "Spanish formats"): dates `dd/mm/aaaa`, date-times
 * `dd/mm/aaaa hh:mm`, numbers with a decimal comma (Intl es-ES), amounts
 * `200,50 €`; and the same texts read back as the API writes them
 * (`YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`, a JSON number). Pure.
 */

/** How a number is written: a count, a `decimal` field (numeric(14,2): always two decimals), an amount in euros. */
export type NumberKind = 'integer' | 'decimal' | 'euros'

const SHOWN: Record<NumberKind, Intl.NumberFormat> = {
  integer: new Intl.NumberFormat('es-ES', { maximumFractionDigits: 2 }),
  decimal: new Intl.NumberFormat('es-ES', { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
  euros: new Intl.NumberFormat('es-ES', { style: 'currency', currency: 'EUR' }),
}
/** What an input holds: no thousands separator, so it reads back as typed. */
const INPUT = new Intl.NumberFormat('es-ES', { maximumFractionDigits: 0, useGrouping: false })
const INPUT_DECIMAL = new Intl.NumberFormat('es-ES', { minimumFractionDigits: 2, maximumFractionDigits: 2, useGrouping: false })

const two = (n: number): string => String(n).padStart(2, '0')

/** `1234`, `12.345` (es-ES groups from five digits), `200,50`, `200,50 €`. */
export function numberText (n: number, kind: NumberKind = 'integer'): string {
  return SHOWN[kind].format(n)
}

/** A number as its input holds it: `20000`; a decimal or an amount `200,50`. */
export function numberInput (n: number, kind: NumberKind = 'integer'): string {
  return (kind === 'integer' ? INPUT : INPUT_DECIMAL).format(n)
}

/** How a field's numbers are written. */
export function numberKind (f: { tipo: string, formato?: string } | undefined): NumberKind {
  if (f?.tipo !== 'decimal') return 'integer'
  return f.formato === 'euros' ? 'euros' : 'decimal'
}

/** `YYYY-MM-DD` → `dd/mm/aaaa`; any other text as it is. */
export function dateText (text: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  return m === null ? text : `${m[3]}/${m[2]}/${m[1]}`
}

/**
 * A date-time as the service writes it (`YYYY-MM-DD HH:MM:SS`, its own
 * zone) → `dd/mm/aaaa hh:mm`; an instant with a zone (`…T08:30:00Z`, a
 * file's upload) in the browser's zone; `seconds` keeps them when not zero.
 */
export function dateTimeText (text: string, seconds = false): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text)
  if (m !== null) return `${m[3]}/${m[2]}/${m[1]} ${m[4]}:${m[5]}${seconds && m[6] !== undefined && m[6] !== '00' ? `:${m[6]}` : ''}`
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(text)) return text
  const d = new Date(text)
  if (Number.isNaN(d.getTime())) return text
  return `${two(d.getDate())}/${two(d.getMonth() + 1)}/${d.getFullYear()} ${two(d.getHours())}:${two(d.getMinutes())}`
}

/** `2026-03` (a month of the summaries) → `03/2026`. */
export function monthText (text: string): string {
  const m = /^(\d{4})-(\d{2})$/.exec(text)
  return m === null ? text : `${m[2]}/${m[1]}`
}

const DATE_PROBLEM = 'debe ser una fecha válida dd/mm/aaaa (por ejemplo, 01/06/2026)'
const DATETIME_PROBLEM = 'debe ser una fecha y hora válidas dd/mm/aaaa hh:mm (por ejemplo, 01/06/2026 10:30)'
const TIME_PROBLEM = 'debe ser una hora válida hh:mm, de 00:00 a 23:59 (por ejemplo, 09:30)'

/** A date that exists, in the years the API takes. */
function day (y: number, m: number, d: number): string | undefined {
  if (y < 1000 || y > 9999 || m < 1 || m > 12 || d < 1) return undefined
  if (d > new Date(Date.UTC(y, m, 0)).getUTCDate()) return undefined
  return `${y}-${two(m)}-${two(d)}`
}

/** `d/m/aaaa` (or `-`, `.`; or the API's own `aaaa-mm-dd`) → `YYYY-MM-DD`. */
function dateOf (text: string): string | undefined {
  const es = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/.exec(text)
  if (es !== null) return day(Number(es[3]), Number(es[2]), Number(es[1]))
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  return iso === null ? undefined : day(Number(iso[1]), Number(iso[2]), Number(iso[3]))
}

/** `h:mm` or `h:mm:ss` on a 24-hour clock → `[HH:MM, SS]`. */
function timeOf (text: string): [string, string] | undefined {
  const m = /^(\d{1,2})[:.](\d{2})(?::(\d{2}))?$/.exec(text)
  if (m === null || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) return undefined
  return [`${two(Number(m[1]))}:${m[2]}`, m[3] ?? '00']
}

export type Parsed<T> = { value: T } | { problem: string }

/** An input's date (`01/06/2026`) as the API takes it (`2026-06-01`). */
export function parseDate (text: string): Parsed<string> {
  const value = dateOf(text.trim())
  return value === undefined ? { problem: DATE_PROBLEM } : { value }
}

/** An input's date and time (`01/06/2026 10:30`) as the API takes it (`2026-06-01 10:30:00`, the service's zone). */
export function parseDateTime (text: string): Parsed<string> {
  const m = /^(\S+?)(?:,?\s+|T)(\S+)$/.exec(text.trim())
  const date = m === null ? undefined : dateOf(m[1]!)
  const time = m === null ? undefined : timeOf(m[2]!)
  return date === undefined || time === undefined ? { problem: DATETIME_PROBLEM } : { value: `${date} ${time[0]}:${time[1]}` }
}

/** An input's time (`9:30`) as the API takes it (`09:30`). */
export function parseTime (text: string): Parsed<string> {
  const t = timeOf(text.trim())
  return t === undefined || t[1] !== '00' ? { problem: TIME_PROBLEM } : { value: t[0] }
}

/** A date as its input holds it: `YYYY-MM-DD` → `dd/mm/aaaa`. */
export const dateInput = dateText

/** A date-time as its input holds it: `dd/mm/aaaa hh:mm`, with its seconds when not zero (so an edit loses none). */
export function dateTimeInput (text: string): string {
  return dateTimeText(text, true)
}

/**
 * An input's number: a decimal comma (`200,50`), or a point followed by
 * one or two digits (`200.50`); points (or spaces) between groups of three
 * digits are thousands (`1.234,56`, `20.000`). Never `200,50` → 20050: a
 * comma is only ever decimal, and more than two decimals is refused, not
 * read otherwise. `decimals`: 0 for an integer.
 */
export function parseNumber (text: string, decimals: 0 | 2): Parsed<number> {
  const s = text.trim().replace(/\s*€$/, '').replace(/[\s\u00a0\u202f]/g, (c, i, all: string) => /\d/.test(all[i - 1] ?? '') ? '.' : c)
  const problem = decimals === 0 ? 'debe ser un número entero (por ejemplo, 20000 o 20.000)' : 'debe ser un número (por ejemplo, 200,50)'
  const m = /^(-?)(\d+(?:\.\d{3})*|\d+)(?:([,.])(\d+))?$/.exec(s)
  if (m === null) return { problem }
  const [, sign, whole, mark, fraction] = m as unknown as [string, string, string, string | undefined, string | undefined]
  // Thousands points (greedy: `1.234` is 1234) never after a leading zero (`0.500` is no number of either way of writing); a decimal point after none.
  if (whole.includes('.') && (whole.startsWith('0') || mark === '.')) return { problem }
  if (fraction !== undefined && fraction.length > decimals) {
    return { problem: decimals === 0 ? problem : 'admite como máximo dos decimales (por ejemplo, 200,50)' }
  }
  const n = Number(`${sign}${whole.replace(/\./g, '')}${fraction === undefined ? '' : `.${fraction}`}`)
  return Number.isFinite(n) ? { value: n } : { problem }
}
