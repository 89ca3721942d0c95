/**
 * A list's filter (the vocabulary of db/where-sql.ts) evaluated in memory
 * over one stored row, as the database would evaluate it over the same
 * row: what a live stream of one module applies to each event's version
 * (docs/user-guide.md "Events: the live stream (eventos)"). Pure.
 *
 * Values are compared as the column compares them: a filter's date-time
 * (a Date) against the stored instant, numbers as numbers (a decimal may
 * be stored as text), times `HH:MM` as `HH:MM:00`, other text by code
 * point (PostgreSQL's collation may order accented text differently for
 * `gt`/`lt`; equality is the same). A comparison with an empty value is
 * false, as SQL's null makes it; `$ilike` is a case-insensitive pattern.
 * A search condition in SQL (`$sql`: `q`, `contiene` on text, `vacio` on
 * a text or array field) cannot be answered here: compiling it throws
 * NotOnStream.
 */
import type { Where } from '../../db/where-sql.js'

/** A stored row of a module (column → value, as the history keeps it). */
export type StoredRow = Readonly<Record<string, unknown>>
export type RowPredicate = (row: StoredRow) => boolean

/** A filter that only the database can evaluate (a search condition in SQL). */
export class NotOnStream extends Error {
  constructor () {
    super('a search condition in SQL cannot be evaluated over a stored row')
    this.name = 'NotOnStream'
  }
}

const TIME = /^\d{2}:\d{2}$/

/** A value in the form it is compared in: instants and numbers as numbers. */
function comparable (stored: unknown, operand: unknown): unknown {
  if (operand instanceof Date) return typeof stored === 'string' || stored instanceof Date ? new Date(stored).getTime() : Number.NaN
  if (typeof operand === 'number') return typeof stored === 'number' ? stored : Number(stored)
  if (typeof stored === 'string' && TIME.test(stored)) return `${stored}:00`
  return stored
}

function operandOf (v: unknown): unknown {
  if (v instanceof Date) return v.getTime()
  if (typeof v === 'string' && TIME.test(v)) return `${v}:00`
  return v
}

function equal (stored: unknown, operand: unknown): boolean {
  return stored !== null && stored !== undefined && comparable(stored, operand) === operandOf(operand)
}

function compare (stored: unknown, operand: unknown): number | undefined {
  if (stored === null || stored === undefined) return undefined
  const a = comparable(stored, operand) as string | number
  const b = operandOf(operand) as string | number
  if (typeof a === 'number' && Number.isNaN(a)) return undefined
  return a < b ? -1 : a > b ? 1 : 0
}

/** `%` any run, `_` any one character, `\` escapes: a case-insensitive regular expression. */
function likePattern (pattern: string): RegExp {
  let re = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    else if (c === '%') re += '[\\s\\S]*'
    else if (c === '_') re += '[\\s\\S]'
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  }
  return new RegExp(`^${re}$`, 'iu')
}

function columnPredicate (column: string, v: unknown): RowPredicate {
  if (v === null) return (row) => row[column] === null || row[column] === undefined
  if (typeof v !== 'object' || v instanceof Date) return (row) => equal(row[column], v)
  if (Array.isArray(v)) {
    const json = JSON.stringify(v)
    return (row) => JSON.stringify(row[column]) === json
  }
  const parts = Object.entries(v as Record<string, unknown>).map(([op, operand]): RowPredicate => {
    switch (op) {
      case '$in': return (row) => (operand as unknown[]).some((x) => equal(row[column], x))
      case '$nin': return (row) => row[column] !== null && row[column] !== undefined && !(operand as unknown[]).some((x) => equal(row[column], x))
      case '$ne': return operand === null
        ? (row) => row[column] !== null && row[column] !== undefined
        : (row) => { const c = compare(row[column], operand); return c !== undefined && c !== 0 }
      case '$gt': return (row) => (compare(row[column], operand) ?? 0) > 0
      case '$gte': return (row) => { const c = compare(row[column], operand); return c !== undefined && c >= 0 }
      case '$lt': return (row) => (compare(row[column], operand) ?? 0) < 0
      case '$lte': return (row) => { const c = compare(row[column], operand); return c !== undefined && c <= 0 }
      case '$ilike': {
        const re = likePattern(operand as string)
        return (row) => typeof row[column] === 'string' && re.test(row[column])
      }
      default: throw new TypeError(`a filter outside the vocabulary of db/where-sql.ts: "${column}" ${op}`)
    }
  })
  return (row) => parts.every((p) => p(row))
}

/** The filter as a predicate over a stored row; NotOnStream when it holds a search condition in SQL. */
export function rowFilter (where: Where): RowPredicate {
  const parts = Object.entries(where).map(([key, v]): RowPredicate => {
    if (key === '$sql') throw new NotOnStream()
    if (key === '$and' || key === '$or') {
      const items = (v as Where[]).map(rowFilter)
      return key === '$and' ? (row) => items.every((p) => p(row)) : (row) => items.some((p) => p(row))
    }
    return columnPredicate(key, v)
  })
  return (row) => parts.every((p) => p(row))
}
