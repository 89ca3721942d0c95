/**
 * TypeBox schemas of a module, used both to validate requests (Ajv, no
 * coercion, no stripping: an undeclared key or a wrong type is a 400) and to
 * document the API (OpenAPI through @fastify/swagger). Where the document
 * says more than validation needs, a `doc` variant says it: bodies without
 * the ignored `_` keys (so a generated client rejects a misspelt field),
 * required fields not nullable (null on them is a 400 too), and every
 * field a record always carries marked required.
 */
import { Type, type TSchema, type TObject } from '@sinclair/typebox'
import type { ModuleDef, Registry } from '../core/registry/types.js'
import { SYSTEM_FIELDS, type SystemField } from '../core/system-fields.js'
import { typeOf } from '../core/field-types/index.js'
import { DATETIME_PATTERN, HASH_PATTERN, datetimeText, idPattern, withFormat } from './field-formats.js'
import { exampleFields, recordExample } from './examples.js'
import { subscriptionExample, subscriptionFieldSchemas } from './subscription-fields.js'
import { readShapes } from './read-schemas.js'
import { labelled, nullable } from '../core/field-types/common.js'


/** Output schema of one system field. */
function systemSchema (s: SystemField, mod: ModuleDef): TSchema {
  const options = s.output.describe !== undefined ? { description: s.output.describe(mod.prefix) } : {}
  const base = s.output.type === 'integer' ? Type.Integer(options) : Type.String(options)
  return s.output.nullable ? nullable(base) : base
}

export interface ModuleSchemas {
  create: TObject
  update: TObject
  record: TObject
  list: TObject
  /**
   * A read with `campos` (`<module>Parcial`): the record's properties, only
   * `_id` required. Added for the document alone (no route serialises with it).
   */
  partial: TObject
  /** A read with `expandir` (`<module>Expandido`): for the document alone, as `partial`. */
  expanded: TObject
  /** What the OpenAPI document shows instead (generate/routes.ts hands them to it; generate/read-schemas.ts). */
  doc: { create: TObject, update: TObject, record: TObject, expanded: TObject, partial: TObject }
}

/** Keys starting with `_` are system fields: accepted and ignored (`_version` is read on PUT). */
const SYSTEM_KEYS = { patternProperties: { '^_': {} } }

export function buildSchemas (mod: ModuleDef, registry: Registry, timeZone: string): ModuleSchemas {
  const input: Record<string, TSchema> = {}
  const output: Record<string, TSchema> = {}
  for (const f of mod.fields) {
    const type = typeOf(f)
    // null is accepted by the schema so that a required field set to null is
    // reported as missing (Datos requeridos) by normalize.ts, not as a type error.
    input[f.name] = nullable(type.input(f, registry))
    // Withheld encrypted fields are absent (named in _restringidos), so they are optional.
    if (!type.writeOnly) output[f.name] = f.encrypted ? Type.Optional(nullable(type.output(f))) : nullable(type.output(f))
  }
  const system = (leads: boolean): Record<string, TSchema> =>
    Object.fromEntries(SYSTEM_FIELDS.filter((s) => s.leads === leads).map((s) => [s.name, systemSchema(s, mod)]))
  const required = mod.fields.filter((f) => f.required && f.default === undefined).map((f) => f.name)
  const create = Type.Object(input, { $id: `${mod.name}Create`, additionalProperties: false, ...SYSTEM_KEYS })
  ;(create as { required?: string[] }).required = required
  const update = Type.Object({ ...input }, { $id: `${mod.name}Update`, additionalProperties: false, ...SYSTEM_KEYS })
  delete (update as { required?: string[] }).required
  const record = Type.Object({
    ...system(true),
    ...output,
    ...system(false),
    _restringidos: Type.Optional(Type.Array(Type.String(), { description: 'Campos cifrados que el usuario no puede ver' })),
    ...(mod.personalData && { _bloqueado: Type.Optional(Type.String({ description: 'Solo en un registro bloqueado por el delegado de protección de datos: desde cuándo. Solo lo leen ese rol y el superadministrador, y cada lectura queda registrada.' })) }),
  }, {
    $id: `${mod.name}Record`,
    description: 'Todos los campos declarados están presentes (null si no tienen valor), salvo los cifrados que el usuario no puede ver, nombrados en _restringidos.',
  })
  // No `required` list: the serializer then keeps the declared field order
  // (it writes required properties first), and withheld fields may be absent.
  delete (record as { required?: string[] }).required
  const list = Type.Object({
    records: Type.Array(Type.Ref(record)),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  }, { $id: `${mod.name}List` })
  const partial = Type.Object({}, { $id: `${mod.name}Parcial` })
  const expanded = Type.Object({}, { $id: `${mod.name}Expandido` })
  return { create, update, record, list, partial, expanded, doc: docSchemas(mod, registry, timeZone, record) }
}

/** The documented variants of the bodies and the record (see the file comment). */
function docSchemas (mod: ModuleDef, registry: Registry, timeZone: string, record: TObject): ModuleSchemas['doc'] {
  const input: Record<string, TSchema> = {}
  // What the subscriptions policy accepts, said in the document (generate/subscription-fields.ts).
  const special = mod.subscriptions ? subscriptionFieldSchemas(mod, registry) : {}
  const specialExample = mod.subscriptions ? subscriptionExample(registry) : {}
  for (const f of mod.fields) {
    const schema = labelled(f, withFormat(f, registry, timeZone, openItems(special[f.name] ?? typeOf(f).input(f, registry)), true))
    input[f.name] = f.required ? schema : nullable(schema)
  }
  const required = mod.fields.filter((f) => f.required && f.default === undefined).map((f) => f.name)
  const create = Type.Object(input, { additionalProperties: false, description: `Campos de ${mod.label}. Las claves que empiezan por _ (campos del sistema) se ignoran.`, examples: [{ ...exampleFields(mod.fields, registry), ...specialExample }] })
  ;(create as { required?: string[] }).required = required
  const changed = mod.fields.find((f) => !f.required) ?? mod.fields[0]!
  const update = Type.Object({
    ...Object.fromEntries(Object.entries(input).map(([k, v]) => [k, Type.Optional(v)])),
    _version: Type.Optional(Type.Integer({ minimum: 1, description: 'Versión que se espera modificar (bloqueo optimista; también If-Match)' })),
  }, {
    additionalProperties: false,
    minProperties: 1,
    // `_version` alone changes nothing: 400 Datos requeridos, as an empty body.
    not: { properties: { _version: {} }, required: ['_version'], maxProperties: 1 },
    description: `Solo los campos que cambian (al menos uno además de _version); null vacía un campo opcional.`,
    examples: [{ ...exampleFields([changed], registry), ...pick(specialExample, changed.name), _version: 1 }] })
  const always = [
    ...SYSTEM_FIELDS.map((s) => s.name),
    ...mod.fields.filter((f) => !f.encrypted && !typeOf(f).writeOnly).map((f) => f.name),
  ]
  const { $id: _id, properties, ...documented } = record as TObject & { $id?: string }
  const formatted: Record<string, TSchema> = { ...properties, ...systemFormats(mod, registry, timeZone, properties) }
  for (const f of mod.fields) {
    if (formatted[f.name] === undefined) continue
    const shown = special[f.name] === undefined ? formatted[f.name]! : nullable(special[f.name]!)
    formatted[f.name] = withFormat(f, registry, timeZone, shown, false)
  }
  for (const f of mod.fields) {
    if (formatted[f.name] !== undefined) formatted[f.name] = labelled(f, formatted[f.name]!)
  }
  const example = { ...recordExample(mod, registry), ...pick(specialExample, ...Object.keys(specialExample).filter((k) => k !== 'secreto')) }
  const shapes = readShapes(mod, formatted, always, example, documented)
  return { create, update, record: shapes.record as TObject, expanded: shapes.expanded as TObject, partial: shapes.partial as TObject }
}

/** The entries of `values` named. */
function pick (values: Record<string, unknown>, ...names: string[]): Record<string, unknown> {
  return Object.fromEntries(names.filter((n) => n in values).map((n) => [n, values[n]]))
}

/** The patterns of the system fields a record shows: ids, instants in the service zone, the hash. */
function systemFormats (mod: ModuleDef, registry: Registry, timeZone: string, properties: Record<string, TSchema>): Record<string, TSchema> {
  // A user's id, or SISTEMA for what the service writes itself (plugins/bootstrap-admin.ts).
  const user = `^(?:${idPattern(registry.usersModule.prefix).slice(1, -1)}|SISTEMA)$`
  const instant = { pattern: DATETIME_PATTERN, description: datetimeText(timeZone, false) }
  const extra: Record<string, object> = {
    _id: { pattern: idPattern(mod.prefix) },
    _created: instant,
    _created_by: { pattern: user },
    _modified: instant,
    _modified_by: { pattern: user },
    _hash: { pattern: HASH_PATTERN },
    _deleted: instant,
  }
  return Object.fromEntries(Object.entries(extra).map(([name, more]) => [name, { ...properties[name], ...more } as TSchema]))
}

/** Object items of an array take any keys: said out loud, since a generated client reads a bare `object` as `{}`. */
function openItems (schema: TSchema): TSchema {
  const items = (schema as { items?: { type?: unknown, additionalProperties?: unknown } }).items
  const types = Array.isArray(items?.type) ? items.type : [items?.type]
  // A structured array's items are closed already (docs/user-guide.md "Structured arrays").
  if (items === undefined || !types.includes('object') || items.additionalProperties === false) return schema
  return { ...schema, items: { ...items, additionalProperties: true } } as TSchema
}
