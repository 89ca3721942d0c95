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
import { DEFAULT_LIMIT, LIST_PARAMETERS, MAX_LIMIT, listFilters, sortable } from '../records/list-query.js'
import { selectable } from '../records/fields-query.js'

/** The reserved parameters the document has words for. */
function reserved (mod: ModuleDef): Record<string, TSchema> {
  return {
    limit: Type.Integer({ minimum: 1, default: DEFAULT_LIMIT, description: `Registros por página (por defecto ${DEFAULT_LIMIT}; por encima de ${MAX_LIMIT} se limita a ${MAX_LIMIT})` }),
    offset: Type.Integer({ minimum: 0, default: 0, description: 'Registros que se saltan: (página - 1) * limit' }),
    sort: Type.String({ description: `Campos de orden separados por comas, - delante para descendente (por defecto -_created; los empates se deshacen por _id). Campos: ${sortable(mod).join(', ')}` }),
    q: Type.String({ description: 'Búsqueda de texto completo en los campos de texto no cifrados: todas las palabras, sin acentos ni plurales; sin sort, los mejores primero' }),
    incluir_eliminados: Type.Boolean({ default: false, description: 'Incluir los registros eliminados (requiere el permiso eliminar del módulo)' }),
  }
}

/** What each operator means, and the schema of its value given the field's. */
const OPERATORS: Record<string, { text: string, value: (field: TSchema) => TSchema }> = {
  eq: { text: 'igual a (exacto, distingue mayúsculas; repetido: cualquiera de los valores)', value: (s) => s },
  ne: { text: 'distinto de (incluye los vacíos)', value: (s) => s },
  gt: { text: 'mayor que', value: withoutEnum },
  gte: { text: 'mayor o igual que', value: withoutEnum },
  lt: { text: 'menor que', value: withoutEnum },
  lte: { text: 'menor o igual que', value: withoutEnum },
  in: { text: 'cualquiera de una lista separada por comas (100 como máximo)', value: () => Type.String() },
  contiene: { text: 'contiene el texto (sin distinguir mayúsculas)', value: () => Type.String() },
  vacio: { text: 'true: sin valor (null, texto vacío o lista vacía); false: con valor', value: () => Type.Boolean() },
}

function withoutEnum (s: TSchema): TSchema {
  const { enum: _e, ...rest } = s as TSchema & { enum?: unknown }
  return rest as TSchema
}

/** The schema of a filter value of a field (its input schema, without its description). */
function valueSchema (mod: ModuleDef, name: string, registry: Registry, blind: boolean): TSchema {
  if (blind) return Type.String()
  const sys = systemField(name)
  const f: FieldDef = mod.fieldMap.get(name) ?? ({ name, type: sys!.type } as FieldDef)
  const impl = sys !== undefined ? FIELD_TYPES_IMPL[sys.type] : typeOf(f)
  const { description: _d, ...schema } = impl.input(f, registry) as TSchema & { description?: string }
  return schema as TSchema
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

/** The query string of `GET /{module}`, one property per parameter. */
export function listQuerystring (mod: ModuleDef, registry: Registry): TObject {
  const words = reserved(mod)
  const properties: Record<string, TSchema> = { ...readShapeParameters(mod) }
  for (const name of LIST_PARAMETERS) properties[name] = Type.Optional(words[name] ?? Type.String())
  for (const filter of listFilters(mod)) {
    const field = valueSchema(mod, filter.name, registry, filter.blind)
    const what = mod.fieldMap.get(filter.name)?.description
    for (const op of filter.operators) {
      const meaning = OPERATORS[op] ?? { text: `operador ${op}`, value: () => Type.String() }
      const about = `${filter.name}: ${meaning.text}${filter.blind ? ' (campo cifrado: valor exacto, requiere el permiso descifrar)' : ''}${what !== undefined ? `. ${what}` : ''}`
      properties[op === 'eq' ? filter.name : `${filter.name}[${op}]`] = Type.Optional({ ...meaning.value(field), description: about } as TSchema)
    }
  }
  return Type.Object(properties, { additionalProperties: false })
}
