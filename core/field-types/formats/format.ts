/**
 * What a `format:` of modules.yaml (docs/administrator-guide.md
 * "modules.yaml reference") declares, all of it in its one file beside
 * this one: the field type it is for, what it means, what it accepts and
 * how it stores it, its examples, and how a form asks for it and a list
 * filters it. The console learns the last two from GET /me/modulos
 * (`entrada`, `filtro`) and never repeats a check: the pattern is the
 * browser's check, the API's `detalles` say the rest.
 */
import type { Rejected } from '../types.js'

/**
 * How a form's input asks for the value: the HTML input's `type`, its
 * on-screen keyboard (`inputmode`), the browser's autofill and a line said
 * under it. Described as `entrada` in GET /me/modulos.
 */
export interface InputHint {
  readonly type: 'text' | 'tel' | 'email'
  readonly inputMode?: 'text' | 'numeric' | 'decimal' | 'tel' | 'email'
  readonly autocomplete?: string
  readonly hint?: string
}

/** How a list filters the field (GET /me/modulos `filtro`): by the whole value, by a part of it, or between two bounds. */
export type FilterKind = 'equals' | 'contains' | 'range'

interface FormatCommon {
  /** Said in the OpenAPI document and in GET /me/modulos. */
  readonly description: string
  readonly input: InputHint
}

/**
 * A checked shape of a string: the pattern the JSON schema states (the
 * OpenAPI `pattern`, the console's `patron`), and the check no pattern can
 * make, applied before the value is stored or encrypted (records/normalize.ts).
 */
export interface StringFormat extends FormatCommon {
  readonly type: 'string'
  /** Matches the empty string too: an empty string means none, as on any string field. */
  readonly pattern: string
  /** The value as stored (its one written form), or why it does not fit. */
  check (value: string): string | Rejected
  /** The OpenAPI document's example, as stored. */
  readonly example: string
  /** What the import's example file shows (generate/operations/import.ts). */
  readonly importSample: string
  readonly filter: 'equals' | 'contains'
}

/** What a decimal means; it checks nothing beyond the type's own. */
export interface DecimalFormat extends FormatCommon {
  readonly type: 'decimal'
  readonly example: number
  readonly importSample: number
  readonly filter: 'range'
  /** How a printed copy writes an amount (records/documents/printed-record.ts). */
  readonly printed: (n: number) => string
}

export type FieldFormatImpl = StringFormat | DecimalFormat
