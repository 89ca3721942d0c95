/**
 * The table of every version of every record (`sys_historial`), written by
 * db/history-statements.ts and db/insert-with-history.ts. One table for all
 * modules, so a module added to modules.yaml needs nothing more.
 */
import { EntitySchema } from '@mikro-orm/core'
import type { Row } from './module-entity.js'

export type HistoryAction = 'crear' | 'editar' | 'eliminar' | 'restaurar' | 'suprimir'

/**
 * The certificate an erasure of personal data writes in its own entry
 * (docs/decisions.md "Erasing personal data keeps the chain"): why, which
 * fields, and each earlier version's original hash with its residue.
 */
export interface ErasureCertificate {
  motivo: string
  /** Fields erased, sub-fields as `testigos.dni`. */
  campos: string[]
  versiones: Array<{ version: number, hash: string, residuo: string }>
}

export interface HistoryRow {
  id?: string
  modulo: string
  registro: string
  version: number
  accion: HistoryAction
  usuario: string
  fecha: Date
  hash: string
  /** Declared fields whose value this version changed. */
  campos: string[]
  /**
   * The stored row of this version, system columns included, in entries
   * written before the history kept each version once (docs/decisions.md
   * "Each version stored once"); null in later ones, whose version is in the
   * next entry's `anterior` or, for the newest, in the live row.
   */
  datos: Row | null
  /** The stored row of the version before this one (null for version 1 and in entries written before `anterior`). */
  anterior: Row | null
  /**
   * Seal format of `hash` (records/integrity/seal-format.ts). The column came with format 2:
   * its default 1 is what the rows written before it read as.
   */
  sello: number
  /** Only in an erasure's entry (`suprimir`): its certificate, sealed by the version's `_supresion`. */
  supresion: ErasureCertificate | null
  /**
   * Id of the transaction that wrote the row (xid8, as text): the global
   * chain's sealer (records/integrity/global-chain.ts) takes rows in transaction order once
   * their transaction has ended. Set by the database's default.
   */
  xid?: string
}

/** One entry per record version: a create whose id is taken fails on it (or on the record's primary key). */
export const HISTORY_VERSION_UNIQUE = 'sys_historial_version_unique'

/**
 * The columns of `sys_historial`, defined once. Made from them: the entity
 * below (the schema), the type of a new entry (`HistoryEntry`, what
 * records/history.ts makes) and the column list of the statements that
 * write one (`HISTORY_WRITTEN_COLUMNS`: db/insert-with-history.ts,
 * db/history-statements.ts). `HistoryRow` must name the same columns.
 */
const HISTORY_PROPERTIES = {
  id: { type: 'bigint', primary: true, autoincrement: true, fieldName: 'id' },
  modulo: { type: 'string', length: 63, fieldName: 'modulo' },
  registro: { type: 'string', length: 40, fieldName: 'registro' },
  version: { type: 'integer', fieldName: 'version' },
  accion: { type: 'string', length: 16, fieldName: 'accion' },
  // No index of its own: nothing reads the history by author, and every write would pay for one (docs/decisions.md "System fields' indexes are declared too").
  usuario: { type: 'string', length: 40, fieldName: 'usuario' },
  fecha: { type: 'datetime', columnType: 'timestamptz', fieldName: 'fecha' },
  hash: { type: 'string', length: 64, fieldName: 'hash' },
  campos: { type: 'json', columnType: 'jsonb', fieldName: 'campos' },
  datos: { type: 'json', columnType: 'jsonb', fieldName: 'datos', nullable: true },
  anterior: { type: 'json', columnType: 'jsonb', fieldName: 'anterior', nullable: true },
  sello: { type: 'smallint', fieldName: 'sello', default: 1 },
  supresion: { type: 'json', columnType: 'jsonb', fieldName: 'supresion', nullable: true },
  xid: { type: 'bigint', columnType: 'xid8', fieldName: 'xid', defaultRaw: 'pg_current_xact_id()', index: 'sys_historial_xid_idx', lazy: true },
} as const satisfies Record<keyof HistoryRow, { readonly type: string, readonly fieldName: string } & Readonly<Record<string, unknown>>>

type HistoryProperties = typeof HISTORY_PROPERTIES
/** The columns the database fills (`id`, `xid`): never written by the service. */
type Filled = { [K in keyof HistoryProperties]: HistoryProperties[K] extends { autoincrement: true } | { defaultRaw: string } ? K : never }[keyof HistoryProperties]
/** A column a new entry is written with. */
export type HistoryColumn = Exclude<keyof HistoryProperties, Filled>
/** A new entry, as records/history.ts makes it: every written column, nothing else. */
export type HistoryEntry = Pick<HistoryRow, HistoryColumn>

/** The columns of a new entry, in the table's order; `json`: sent as JSON text (jsonb). */
export const HISTORY_WRITTEN_COLUMNS: ReadonlyArray<{ readonly name: HistoryColumn, readonly json: boolean }> =
  (Object.entries(HISTORY_PROPERTIES) as Array<[keyof HistoryProperties, HistoryProperties[keyof HistoryProperties]]>)
    .filter(([, p]) => !('autoincrement' in p) && !('defaultRaw' in p))
    .map(([name, p]) => ({ name: name as HistoryColumn, json: p.type === 'json' }))

export const HistoryEntity = new EntitySchema<HistoryRow>({
  name: 'sys_historial',
  tableName: 'sys_historial',
  properties: HISTORY_PROPERTIES,
  uniques: [{ name: HISTORY_VERSION_UNIQUE, properties: ['modulo', 'registro', 'version'] }],
})
