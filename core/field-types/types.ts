/**
 * The contract every field type of modules.yaml fulfils: everything the
 * service needs to know about a type, in one object per type (one file
 * each, collected in index.ts). Pure: the callers in generate/, db/ and
 * records/ bring TypeBox schemas to routes, columns to the entity, and
 * encryption to the values.
 */
import type { TSchema } from '@sinclair/typebox'
import type { ColumnSpec } from '../column-spec.js'
import type { FieldDef, Registry } from '../registry/types.js'

/** A declared field's value ready for storage (before encryption/hashing). */
export type ColumnValue = string | number | boolean | Date | unknown[] | null

/** The operators of a list filter `?campo[op]=` (docs/user-guide.md "Listing"). */
export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'contiene', 'vacio'] as const
export type FilterOperator = typeof FILTER_OPERATORS[number]

/** How an instant is written: in the service time zone for the API, in UTC for the hash. */
export type InstantFormat = (d: Date) => string

/**
 * A value that does not fit, with the `mensaje` of its validation detail.
 * A class rather than `{ error }` so no stored value (an array item is
 * free-form) can ever be mistaken for one.
 */
export class Rejected {
  constructor (readonly mensaje: string) {}
}

/** A `default:` of modules.yaml as the schema lets it through. */
export type DeclaredDefault = string | number | boolean

export interface FieldTypeImpl {
  /** Schema of what a client may send (the generator adds `null`). */
  input (f: FieldDef, registry: Registry): TSchema
  /** Schema of what a client receives (the generator adds `null`). */
  output (f: FieldDef): TSchema
  /** Column of an unencrypted value (an encrypted one is always text). */
  column (f: FieldDef): ColumnSpec
  /** Appended to the field's column name (a password column holds only its hash). */
  readonly columnSuffix?: string
  /**
   * Whether fields of this type may be filtered and sorted on; it is also
   * the default of `filterable` for an unencrypted field.
   */
  readonly filterable: boolean
  /** Whether a filterable field of this type gets a b-tree index. */
  readonly indexed: boolean
  /** The filter operators a filterable field of this type takes. */
  readonly operators: readonly FilterOperator[]
  /** The operators a field of this type takes even when it is not filterable (a text's `contiene`). */
  readonly searchOperators: readonly FilterOperator[]
  /**
   * Text a person may search in (string, text): `contiene` ignores case and
   * accents, and `q` searches it (core of docs/user-guide.md "Search"; db/search-sql.ts).
   */
  readonly textSearch: boolean
  /** What `vacio` counts as no value besides null: an empty string or an empty array. */
  readonly empty: 'null' | 'string' | 'array'
  /** A filter value (already known to be clean text) as the column compares it, or Rejected. */
  filterValue (text: string, timeZone: string): unknown
  /**
   * The checks a JSON schema cannot make, and the conversion of a non-null,
   * schema-valid client value to its column value.
   */
  normalize (value: unknown, timeZone: string): ColumnValue | Rejected
  /** The value a declared `default:` gives on create. */
  initial (declared: DeclaredDefault, timeZone: string): ColumnValue
  /** What is wrong with a declared `default:` (English, for modules.yaml), or undefined. */
  defaultProblem (declared: DeclaredDefault, enumValues: readonly string[] | undefined): string | undefined
  /** `max_length` when modules.yaml does not say (string-like types only). */
  readonly defaultMaxLength?: number
  /** `max_items` when modules.yaml does not say (arrays only). */
  readonly defaultMaxItems?: number
  /**
   * A secret taken in and never given back: stored as a one-way hash by the
   * record service, left out of every API record and of the output schema.
   */
  readonly writeOnly: boolean
  /** A non-null stored value in API form (instants written by `instant`); also its form in `_hash`. */
  view (stored: unknown, instant: InstantFormat): unknown
  /**
   * A non-null API value as a printed copy writes it, in Spanish
   * (core/spanish-text.ts; records/documents/printed-record.ts); `each`
   * writes a structured array's sub-values, each by its own type.
   */
  printed (value: unknown, f: FieldDef, each: (value: unknown, f: FieldDef) => string): string
  /** The text a value is encrypted, blind-indexed and digested as. */
  toPlaintext (value: unknown): string
  /** The value back from the text `toPlaintext` made. */
  fromPlaintext (text: string): unknown
}
