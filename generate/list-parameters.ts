/**
 * The query parameters of a module's list as the OpenAPI document shows
 * them (docs/user-guide.md "Listing"; docs/user-guide.md "API explorer and OpenAPI document"): the page, sort and flag parameters the list
 * parser reserves, and one parameter per filter and operator in the
 * `campo[op]` form. Both lists come from records/list-query.ts (which reads
 * each field type's operators), so a new operator or reserved parameter
 * appears here without an edit; one this file has no words for is
 * documented as text. Documentation only: the list parser checks the query
 * itself (a JSON schema with Ajv's no-coercion rules would refuse `limit=10`).
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { FieldDef, ModuleDef, Registry } from '../core/registry/types.js'
import { systemField } from '../core/system-fields.js'
import { FIELD_TYPES_IMPL, typeOf } from '../core/field-types/index.js'
import { DEFAULT_LIMIT, LIST_PARAMETERS, MAX_LIMIT, listFilters, sortable, type ListFilter } from '../records/list-query.js'
import { anyOfParameters } from './any-of-parameter.js'
import { selectable } from '../records/fields-query.js'
import { idPattern, withFormat } from './field-formats.js'

type Schema = Record<string, unknown>

/** `^-?(a|b)(,-?(a|b))*$`: the fields `sort` takes, each optionally descending. */
function sortPattern (mod: ModuleDef): string {
  const one = `-?(?:${sortable(mod).map(escape).join('|')})`
  return `^${one}(?:,${one})*$`
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The reserved parameters the document has words for. */
function reserved (mod: ModuleDef): Record<string, TSchema> {
  return {
    limit: Type.Integer({ minimum: 1, default: DEFAULT_LIMIT, description: `Registros por página (por defecto ${DEFAULT_LIMIT}; por encima de ${MAX_LIMIT} se limita a ${MAX_LIMIT})` }),
    offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0, description: 'Registros que se saltan: (página - 1) * limit' }),
    sort: Type.String({ pattern: sortPattern(mod), description: `Campos de orden separados por comas, - delante para descendente (por defecto -_created; los empates se deshacen por _id). Campos: ${sortable(mod).join(', ')}` }),
    q: Type.String({ description: mod.fullText.length === 0
      ? 'Búsqueda de texto completo: este módulo no declara campos en los que buscar (400)'
      : `Búsqueda de texto completo en ${mod.fullText.map((f) => f.name).join(', ')}: cada palabra encuentra las que empiezan por ella (Cervan → Cervantes, 9000 → 90001) y sus formas (robos → robo), sin distinguir acentos ni mayúsculas; deben coincidir todas; sin sort, los mejores primero` }),
    incluir_eliminados: Type.Boolean({ default: false, description: 'Incluir los registros eliminados (requiere el permiso eliminar del módulo)' }),
  }
}

/** One value of a comma-separated list, as a pattern without anchors, from the field's schema. */
function itemPattern (s: Schema): string {
  if (Array.isArray(s.enum)) return `(?:${(s.enum as string[]).map(escape).join('|')})`
  if (typeof s.pattern === 'string') return `(?:${s.pattern.replace(/^\^/, '').replace(/\$$/, '')})`
  if (s.type === 'integer') return '-?\\d{1,10}'
  if (s.type === 'number') return '-?\\d{1,12}(?:\\.\\d{1,2})?'
  if (s.type === 'boolean') return '(?:true|false)'
  return '[^,]{0,500}'
}

/** `a,b,c`: at most 100 values, each of the field's type (records/list-query.ts). */
function commaList (s: Schema): TSchema {
  const item = itemPattern(s)
  return Type.String({ pattern: `^${item}(?:,${item}){0,99}$` })
}

/** Repeated (`?estado=a&estado=b`): any of the values, at most 100. */
const repeated = (s: Schema): TSchema => Type.Array(s as TSchema, { maxItems: 100 })

/** What each operator means, and the schema of its value given the field's. */
const OPERATORS: Record<string, { text: string, value: (field: Schema) => TSchema }> = {
  eq: { text: 'igual a (exacto, distingue mayúsculas; repetido: cualquiera de los valores)', value: repeated },
  ne: { text: 'distinto de (incluye los vacíos; repetido: ninguno de los valores)', value: repeated },
  gt: { text: 'mayor que', value: withoutEnum },
  gte: { text: 'mayor o igual que', value: withoutEnum },
  lt: { text: 'menor que', value: withoutEnum },
  lte: { text: 'menor o igual que', value: withoutEnum },
  in: { text: 'cualquiera de una lista separada por comas (100 como máximo)', value: commaList },
  contiene: { text: 'contiene el texto (sin distinguir mayúsculas)', value: () => Type.String({ maxLength: 500 }) },
  vacio: { text: 'true: sin valor (null, texto vacío o lista vacía); false: con valor', value: () => Type.Boolean() },
}

function withoutEnum (s: Schema): TSchema {
  const { enum: _e, ...rest } = s
  return rest as TSchema
}

/** The schema of a filter value of a field (its input schema with its formats, without its description). */
function valueSchema (mod: ModuleDef, name: string, registry: Registry, timeZone: string, blind: boolean): Schema {
  if (blind) return Type.String({ maxLength: 500 })
  const sys = systemField(name)
  const f: FieldDef = mod.fieldMap.get(name) ?? ({ name, type: sys!.type } as FieldDef)
  const impl = sys !== undefined ? FIELD_TYPES_IMPL[sys.type] : typeOf(f)
  const formatted = withFormat(f, registry, timeZone, impl.input(f, registry), true) as Schema
  const { description: _d, ...schema } = name === '_id' ? { ...formatted, pattern: idPattern(mod.prefix) } : formatted
  return schema
}

/**
 * `campos` and `expandir` (docs/user-guide.md "Choosing fields and related
 * records (campos, expandir)"), taken by a list and a GET by id; `expandir`
 * only where the module has refs.
 */
export function readShapeParameters (mod: ModuleDef): Record<string, TSchema> {
  const fields = selectable(mod).filter((n) => !n.startsWith('_'))
  const refs = mod.fields.filter((f) => f.type === 'ref')
  const campos = Type.String({
    description: `Solo estos campos, separados por comas (y siempre _id); admite los del sistema. Un campo de un registro expandido se nombra referencia.campo. Campos: ${selectable(mod).join(', ')}`,
    examples: [[...fields.slice(0, 2), '_version'].join(',')],
  })
  if (refs.length === 0) return { campos: Type.Optional(campos) }
  const expandir = Type.String({
    description: `Referencias que se sustituyen por el registro al que apuntan, como el usuario lo ve en su módulo (un nivel); las que no puede ver, eliminadas o inexistentes se quedan como id y se nombran en _sin_expandir. Referencias: ${refs.map((r) => `${r.name} (${r.ref!})`).join(', ')}`,
    examples: [refs.map((r) => r.name).join(',')],
  })
  return { campos: Type.Optional(campos), expandir: Type.Optional(expandir) }
}

/**
 * The query string of `GET /{module}`, one property per parameter; every
 * parameter in the form style, a repeated one exploded (`?estado=a&estado=b`).
 */
export function listQuerystring (mod: ModuleDef, registry: Registry, timeZone: string): TObject {
  const words = reserved(mod)
  const properties: Record<string, TSchema> = { ...readShapeParameters(mod) }
  for (const name of LIST_PARAMETERS) properties[name] = Type.Optional(words[name] ?? Type.String())
  for (const filter of listFilters(mod)) {
    const field = valueSchema(mod, filter.name, registry, timeZone, filter.blind)
    const what = mod.fieldMap.get(filter.name)?.description
    for (const op of filter.operators) {
      const meaning = OPERATORS[op] ?? { text: `operador ${op}`, value: () => Type.String() }
      const about = `${filter.name}: ${meaning.text}${filter.blind ? ' (campo cifrado: valor exacto, requiere el permiso descifrar)' : ''}${what !== undefined ? `. ${what}` : ''}`
      properties[op === 'eq' ? filter.name : `${filter.name}[${op}]`] = Type.Optional({ ...meaning.value(field), description: about } as TSchema)
    }
  }
  // In a JSON group a value keeps its JSON type, and `in` takes a list (records/any-of-query.ts).
  const groupValue = (f: ListFilter, op: string): TSchema => {
    const field = valueSchema(mod, f.name, registry, timeZone, f.blind)
    if (op === 'in') return repeated(field)
    if (op === 'eq' || op === 'ne') return Type.Union([field as TSchema, repeated(field)])
    return OPERATORS[op]?.value(field) ?? Type.String()
  }
  for (const [name, schema] of Object.entries(anyOfParameters(listFilters(mod), groupValue, `${mod.name}Grupo`))) properties[name] = Type.Optional(schema)
  return Type.Object(properties, { additionalProperties: false, style: 'form', explode: true })
}
