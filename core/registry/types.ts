/**
 * The validated, frozen shape of modules.yaml as the rest of the code sees
 * it. Built by core/registry/load.ts; nothing else constructs these.
 */
import type { FieldFormat } from '../field-types/formats/index.js'

export const FIELD_TYPES = [
  'string', 'text', 'integer', 'decimal', 'boolean', 'date', 'datetime', 'time', 'array', 'ref', 'password', 'file',
] as const
export type FieldType = typeof FIELD_TYPES[number]

/** The types a sub-field of a structured array's items may take (docs/administrator-guide.md "modules.yaml reference"). */
export const ITEM_FIELD_TYPES = ['string', 'text', 'integer', 'decimal', 'boolean', 'date', 'datetime', 'time'] as const

/** The `format:` names a field may declare: one file each in core/field-types/formats/, named in its index. */
export type { FieldFormat } from '../field-types/formats/index.js'

/** The actions of a permission string `{module}.{action}` (`exportar`, `importar`: docs/user-guide.md "Export and import"). */
export const ACTIONS = ['ver', 'crear', 'editar', 'eliminar', 'descifrar', 'exportar', 'importar'] as const
export type Action = typeof ACTIONS[number]

/** Suffix that limits a permission to the caller's own records (docs/administrator-guide.md "modules.yaml reference"): `denuncias.editar:propios`. */
export const OWN_SUFFIX = 'propios'

export interface FieldDef {
  /** JSON key, exactly as written in modules.yaml (may hold ñ). */
  readonly name: string
  /** Column (and ORM property) name: the JSON key folded to ASCII. */
  readonly column: string
  readonly type: FieldType
  readonly required: boolean
  /** Default on create; the string `now` for date/datetime means the clock. */
  readonly default?: string | number | boolean
  readonly enum?: readonly string[]
  readonly unique: boolean
  /** An encrypted value (docs/user-guide.md "Encryption"); never set on a file field, which says `encryptedFiles`. */
  readonly encrypted: boolean
  /**
   * A file field declared `encrypted: true` (docs/user-guide.md "Evidence
   * files"): its files' bytes are encrypted at rest and only callers with
   * `descifrar` download them; the list of files itself is a plain value.
   */
  readonly encryptedFiles?: boolean
  readonly searchable: boolean
  /** Personal data a data-protection officer may erase: declared `personal: true`, or encrypted (docs/user-guide.md "Personal data"). */
  readonly personal: boolean
  /** Target module name for `type: ref`. */
  readonly ref?: string
  readonly minLength?: number
  readonly maxLength?: number
  readonly min?: number
  readonly max?: number
  readonly pattern?: string
  /** A checked shape of a string field (`dni`, `telefono`), or what a decimal means (`euros`): core/field-types/formats/. */
  readonly format?: FieldFormat
  readonly maxItems?: number
  /**
   * A structured array's items (docs/user-guide.md "Structured arrays"):
   * objects whose keys are these sub-fields, each a scalar FieldDef
   * (`name` its key; `encrypted` ones are encrypted value by value).
   */
  readonly items?: readonly FieldDef[]
  /** May be used in `?campo=` filters and `sort`; not necessarily indexed (`indexed`). */
  readonly filterable: boolean
  /**
   * Its filters are served by an index (docs/administrator-guide.md
   * "Indexes"): a b-tree over the live rows for a value, the size index of
   * `vacio` for a text or array field. Declared (`indexed:`) or implied by
   * the field's role: state field, owner field, ref, unique, enum, date and
   * date-time. An unindexed filter still answers, by reading the table.
   */
  readonly indexed: boolean
  /** `contiene` is served by a trigram index (`contains_index: true`); otherwise it reads the table. */
  readonly containsIndex: boolean
  readonly description?: string
  /**
   * What a person reads for the field (docs/administrator-guide.md
   * "Labels"): its declared `label`, else its name.
   */
  readonly label: string
  /** A help text for a person filling it in (`help:`). */
  readonly help?: string
  /** With `enum`: every enum value's label, the declared one (`enum_labels`) or the value itself. */
  readonly enumLabels?: Readonly<Record<string, string>>
}

export interface TransitionDef {
  readonly from: string
  readonly to: string
  /** Fields that must hold a value after the update for this move. */
  readonly requires: readonly string[]
}

export interface ModuleDef {
  /** Registry key, e.g. `sala092`. */
  readonly name: string
  /** URL path segment (no slashes). */
  readonly path: string
  /** `_id` prefix, e.g. `DEN`. */
  readonly prefix: string
  readonly table: string
  /** What a person reads for the module: its declared `label`, else its name. */
  readonly label: string
  readonly description?: string
  /** A help text for a person (`help:`, docs/administrator-guide.md "Labels"). */
  readonly help?: string
  /** The field holding the record's state (`estado`, `situacion`), if any. */
  readonly stateField?: string
  readonly transitions: readonly TransitionDef[]
  /** True for the one module that holds logins (username, password, rol, activo). */
  readonly users: boolean
  /** True for the one module whose records are webhook subscriptions (docs/user-guide.md "Webhooks (suscripciones)"). */
  readonly subscriptions: boolean
  readonly fields: readonly FieldDef[]
  readonly fieldMap: ReadonlyMap<string, FieldDef>
  /**
   * Owner fields (docs/administrator-guide.md "modules.yaml reference"): `ref` fields to the staff module whose value
   * ties a record to a staff member. A record is the caller's own when the
   * caller created it or one of these holds the caller's `personal_id`.
   */
  readonly ownerFields: readonly FieldDef[]
  /** The staff module itself: a record is owned by the user whose `personal_id` is its `_id`. */
  readonly ownedById: boolean
  /** The fields `q` searches (`full_text:`; by default its unencrypted text fields), in its stored document. */
  readonly fullText: readonly FieldDef[]
  /**
   * The system columns of `_created_by`, `_modified` and `_modified_by` that
   * have a b-tree of their own: all three unless `system_fields` says
   * `indexed: false` (docs/administrator-guide.md "Indexes").
   */
  readonly indexedSystemFields: readonly string[]
  /** The fields a list shows beside `_id` (`list_columns:`, or the default of core/registry/list-columns.ts), in the file's order when declared. */
  readonly listColumns: readonly string[]
  /** The fields a printed copy leaves out (`documento: { excluir }`, core/registry/printed-fields.ts). */
  readonly printExcluded: readonly string[]
  /** When its records are due for review (`conservacion:`, core/registry/retention.ts), if declared. */
  readonly retention?: RetentionDef
  /**
   * Some field or sub-field is personal: the officer may block its records
   * (a `_bloqueado` column, docs/user-guide.md "Personal data").
   */
  readonly personalData: boolean
}

/** `conservacion: { años, desde, estados }`. */
export interface RetentionDef {
  readonly years: number
  /** A date or datetime field, or `_created`. */
  readonly from: string
  /** Only records in one of these states are due; every record when absent. */
  readonly states?: readonly string[]
}

export interface RoleDef {
  readonly name: string
  readonly description?: string
  readonly permissions: readonly string[]
  /** `proteccion_datos: true`: reviews, blocks and erases personal data, searches a person's data (docs/user-guide.md "Personal data"). */
  readonly dataProtection: boolean
}

export interface Registry {
  /** Path of the file the registry was read from. */
  readonly file: string
  readonly modules: readonly ModuleDef[]
  readonly roles: readonly RoleDef[]
  readonly byName: ReadonlyMap<string, ModuleDef>
  readonly byPath: ReadonlyMap<string, ModuleDef>
  readonly roleMap: ReadonlyMap<string, RoleDef>
  readonly usersModule: ModuleDef
  /** The module of webhook subscriptions, if modules.yaml declares one (`subscriptions: true`). */
  readonly subscriptionsModule?: ModuleDef
  /** The module `usuarios.personal_id` points at (staff), if the users module links logins to staff. */
  readonly staffModule?: ModuleDef
}
