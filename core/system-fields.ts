/**
 * The fields every record carries besides the declared ones (docs/user-guide.md "Records"):
 * the one list the entity, the registry check, list queries, the record
 * view, the hash payload and the OpenAPI record schema are built from.
 * Pure data: no I/O.
 */
import type { ColumnSpec } from './column-spec.js'
import type { FieldType } from './registry/types.js'

export interface SystemField {
  /** JSON key and column name (both the same: system names are ASCII). */
  readonly name: string
  /**
   * The field type whose rules it follows where it meets a client: filter
   * operators and filter values, sort, and how a stored value is shown.
   */
  readonly type: Extract<FieldType, 'string' | 'integer' | 'datetime'>
  /** Written before the declared fields (`_id`) rather than after them. */
  readonly leads: boolean
  /** May be used in `?campo=` filters and `sort`. */
  readonly filterable: boolean
  /** Enters the `_hash` payload (every one but `_hash` itself). */
  readonly sealed: boolean
  /**
   * The column, and whether it is the key, indexed or nullable (`_created`
   * and `_deleted` are indexed by db/record-indexes.ts, with `_id` and over
   * the deleted rows).
   */
  readonly column: ColumnSpec & { readonly primary?: true, readonly index?: true, readonly nullable?: true }
  /** What the API record says about it: JSON type, whether it may be null, its description for a module. */
  readonly output: { readonly type: 'string' | 'integer', readonly nullable: boolean, readonly describe?: (prefix: string) => string }
}

const DATETIME: ColumnSpec = { type: 'datetime', columnType: 'timestamptz' }
/** Record ids and user ids: `PREFIX-YYYY-NNNNN`. */
const ID: ColumnSpec = { type: 'string', length: 40 }

/** In table order, which is also the order of the API record. */
export const SYSTEM_FIELDS: readonly SystemField[] = Object.freeze([
  { name: '_id', type: 'string', leads: true, filterable: true, sealed: true, column: { ...ID, primary: true }, output: { type: 'string', nullable: false, describe: (prefix) => `${prefix}-AAAA-NNNNN` } },
  { name: '_created', type: 'datetime', leads: false, filterable: true, sealed: true, column: DATETIME, output: { type: 'string', nullable: false } },
  { name: '_created_by', type: 'string', leads: false, filterable: true, sealed: true, column: { ...ID, index: true }, output: { type: 'string', nullable: false } },
  { name: '_modified', type: 'datetime', leads: false, filterable: true, sealed: true, column: { ...DATETIME, index: true }, output: { type: 'string', nullable: false } },
  { name: '_modified_by', type: 'string', leads: false, filterable: true, sealed: true, column: { ...ID, index: true }, output: { type: 'string', nullable: false } },
  { name: '_version', type: 'integer', leads: false, filterable: true, sealed: true, column: { type: 'integer' }, output: { type: 'integer', nullable: false } },
  // A SHA-256 in hex; filtering on it would only help someone probing the chain.
  { name: '_hash', type: 'string', leads: false, filterable: false, sealed: false, column: { type: 'string', length: 64 }, output: { type: 'string', nullable: false } },
  // Soft deletion (docs/user-guide.md "Concurrency, delete and restore"): lists leave these out unless asked, through `incluir_eliminados`.
  { name: '_deleted', type: 'datetime', leads: false, filterable: false, sealed: true, column: { ...DATETIME, nullable: true }, output: { type: 'string', nullable: true } },
] satisfies SystemField[])

/** System column names, in table order. */
export const SYSTEM_COLUMNS: readonly string[] = Object.freeze(SYSTEM_FIELDS.map((s) => s.name))

/** The system field called `name`; own names only (`__proto__`, `toString` are none). */
export function systemField (name: string): SystemField | undefined {
  return SYSTEM_FIELDS.find((s) => s.name === name)
}

/** The system fields whose index a module may leave out (`system_fields`, docs/administrator-guide.md "Indexes"): `_id` is the key, `_created` the default order. */
export const OPTIONAL_SYSTEM_INDEXES: readonly string[] = Object.freeze(SYSTEM_FIELDS.filter((s) => s.column.index === true).map((s) => s.name))
