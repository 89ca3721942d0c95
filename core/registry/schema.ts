/**
 * TypeBox schema of modules.yaml itself. Every object is closed
 * (additionalProperties: false) so a misspelt key is an error, reported by
 * load.ts with the line number and the closest valid name.
 */
import { Type, type Static, type TOptional } from '@sinclair/typebox'
import { OPTIONAL_SYSTEM_INDEXES } from '../system-fields.js'
import { FIELD_TYPES, ITEM_FIELD_TYPES } from './types.js'

const Name = Type.String({ pattern: '^[a-z][a-z0-9_ñ]*$', maxLength: 63 })
const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()])

/** What a person reads (docs/administrator-guide.md "Labels"): a label, a help text, an enum value's label. */
const Words = Type.String({ minLength: 1, maxLength: 500 })
/** Labels of enum values by value; build.ts checks each key is one of the field's values. */
const EnumLabels = Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 200 }), { minProperties: 1 })
/** What fields and sub-fields say to a person. */
const Labels = {
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  help: Type.Optional(Words),
  enum_labels: Type.Optional(EnumLabels),
}

/**
 * A sub-field of a structured array's items: a scalar field with the keys
 * that mean something inside an item (no default, index, column or nesting).
 */
export const ItemFieldSchema = Type.Object({
  type: Type.Union(ITEM_FIELD_TYPES.map((t) => Type.Literal(t))),
  required: Type.Optional(Type.Boolean()),
  encrypted: Type.Optional(Type.Boolean()),
  // With encrypted: every item's value blind-indexed, for a person's search (records/item-index.ts).
  searchable: Type.Optional(Type.Boolean()),
  enum: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
  min_length: Type.Optional(Type.Integer({ minimum: 0 })),
  max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 20_000 })),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  pattern: Type.Optional(Type.String()),
  format: Type.Optional(Type.String()),
  personal: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.String()),
  ...Labels,
}, { additionalProperties: false })

export const FieldSchema = Type.Object({
  type: Type.Union(FIELD_TYPES.map((t) => Type.Literal(t))),
  required: Type.Optional(Type.Boolean()),
  default: Type.Optional(Scalar),
  enum: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
  unique: Type.Optional(Type.Boolean()),
  encrypted: Type.Optional(Type.Boolean()),
  searchable: Type.Optional(Type.Boolean()),
  // Personal data a data-protection officer may erase (docs/administrator-guide.md "Personal data"); encrypted fields are too.
  personal: Type.Optional(Type.Boolean()),
  ref: Type.Optional(Name),
  min_length: Type.Optional(Type.Integer({ minimum: 0 })),
  max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  pattern: Type.Optional(Type.String()),
  // Any text here: build.ts names the known formats with a closest-name hint.
  format: Type.Optional(Type.String()),
  max_items: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  items: Type.Optional(Type.Record(Name, ItemFieldSchema, { minProperties: 1, maxProperties: 50, additionalProperties: false })),
  filterable: Type.Optional(Type.Boolean()),
  // Which of its filters an index serves (docs/administrator-guide.md "Indexes"); build.ts checks where they fit.
  indexed: Type.Optional(Type.Boolean()),
  contains_index: Type.Optional(Type.Boolean()),
  column: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]*$', maxLength: 63 })),
  description: Type.Optional(Type.String()),
  examples: Type.Optional(Type.Array(Scalar)),
  ...Labels,
}, { additionalProperties: false })

export const TransitionSchema = Type.Object({
  from: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 })]),
  to: Type.String(),
  requires: Type.Optional(Type.Array(Type.String())),
}, { additionalProperties: false })

/** What a module may say about a system field: whether it has a b-tree of its own (docs/administrator-guide.md "Indexes"). */
export const SystemFieldSchema = Type.Object({ indexed: Type.Boolean() }, { additionalProperties: false })

/** The system fields whose index may be left out (core/registry/index-keys.ts systemIndexesOf); `_id` and `_created` always keep theirs. */
export const SystemFieldsSchema = Type.Object(
  Object.fromEntries(OPTIONAL_SYSTEM_INDEXES.map((name) => [name, Type.Optional(SystemFieldSchema)])) as Record<string, TOptional<typeof SystemFieldSchema>>,
  { additionalProperties: false })

/** `documento`: what a printed copy of the module's records leaves out (core/registry/printed-fields.ts). */
export const PrintedCopySchema = Type.Object({ excluir: Type.Optional(Type.Array(Type.String(), { uniqueItems: true })) }, { additionalProperties: false })

/** `conservacion`: when a record is due for review (core/registry/retention.ts checks the names). */
export const RetentionSchema = Type.Object({
  años: Type.Integer({ minimum: 1, maximum: 100 }),
  desde: Type.Optional(Type.String()),
  estados: Type.Optional(Type.Array(Type.String(), { uniqueItems: true, minItems: 1 })),
}, { additionalProperties: false })

export const ModuleSchema = Type.Object({
  path: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 63 })),
  prefix: Type.String({ pattern: '^[A-Z0-9]{2,6}$' }),
  table: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]*$', maxLength: 63 })),
  label: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  help: Type.Optional(Words),
  state_field: Type.Optional(Type.String()),
  transitions: Type.Optional(Type.Array(TransitionSchema)),
  users: Type.Optional(Type.Boolean()),
  subscriptions: Type.Optional(Type.Boolean()),
  owner_fields: Type.Optional(Type.Array(Type.String(), { uniqueItems: true })),
  full_text: Type.Optional(Type.Array(Type.String(), { uniqueItems: true })),
  system_fields: Type.Optional(SystemFieldsSchema),
  // The fields a list shows beside _id (core/registry/list-columns.ts checks them against the module's).
  list_columns: Type.Optional(Type.Array(Type.String(), { uniqueItems: true, minItems: 1, maxItems: 12 })),
  // What a printed copy leaves out (core/registry/printed-fields.ts checks the names).
  documento: Type.Optional(PrintedCopySchema),
  // How long records are kept before review (core/registry/retention.ts checks the names).
  conservacion: Type.Optional(RetentionSchema),
  fields: Type.Record(Name, FieldSchema, { minProperties: 1, additionalProperties: false }),
}, { additionalProperties: false })

export const RoleSchema = Type.Object({
  description: Type.Optional(Type.String()),
  permissions: Type.Array(Type.String({ pattern: '^(\\*|[a-z0-9_ñ]+)\\.(\\*|[a-z]+)(:[a-z]+)?$' })),
  // The data-protection officer's work (docs/user-guide.md "Personal data"); `*.*` does not give it.
  proteccion_datos: Type.Optional(Type.Boolean()),
}, { additionalProperties: false })

export const RegistryFileSchema = Type.Object({
  version: Type.Literal(1),
  roles: Type.Record(Name, RoleSchema, { minProperties: 1, additionalProperties: false }),
  modules: Type.Record(Name, ModuleSchema, { minProperties: 1, additionalProperties: false }),
}, { additionalProperties: false })

export type RegistryFile = Static<typeof RegistryFileSchema>
export type ModuleFile = Static<typeof ModuleSchema>
export type FieldFile = Static<typeof FieldSchema>
export type ItemFieldFile = Static<typeof ItemFieldSchema>
