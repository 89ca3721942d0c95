/**
 * `GET /{module}/resumen`: the records a list with the same filters would
 * show, grouped, counted and measured (docs/user-guide.md "Summaries
 * (resumen)"). A static path: the router serves it before `/:id`.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import type { ModuleDef, Registry } from '../../core/registry/types.js'
import { envelope } from '../../http/schemas.js'
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../records/list-query.js'
import { BUCKETS, MAX_KEYS, MEASURES, summaryVocabulary } from '../../records/summary-query.js'
import { listQuerystring } from '../list-parameters.js'
import type { Operation } from './operation.js'

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const anyOf = (alternatives: string[]): string => `(?:${alternatives.filter((a) => a !== '').join('|')})`
const names = (list: string[]): string => list.length === 0 ? '' : anyOf(list.map(escape))
const listOf = (item: string, most?: number): string => `^${item}(?:,${item})${most === undefined ? '*' : `{0,${most - 1}}`}$`

/** The summary's own parameters, each with its exact pattern on this module, a description and an example. */
function summaryParameters (mod: ModuleDef): Record<string, TSchema> {
  const v = summaryVocabulary(mod)
  const dated = [...v.instants, ...v.days]
  const key = anyOf([
    names(v.plain),
    v.instants.length === 0 ? '' : `${names(v.instants)}:${anyOf([...BUCKETS])}`,
    v.days.length === 0 ? '' : `${names(v.days)}:${anyOf(BUCKETS.filter((b) => b !== 'hora'))}`,
  ])
  const measure = anyOf([
    v.numbers.length === 0 ? '' : `${anyOf([...MEASURES])}:${names(v.numbers)}`,
    dated.length === 0 ? '' : `(?:min|max):${names(dated)}`,
  ])
  const firstKey = mod.stateField ?? v.plain.find((n) => !n.startsWith('_')) ?? v.plain[0]!
  const firstDate = dated.find((n) => !n.startsWith('_')) ?? dated[0]!
  const firstNumber = v.numbers.find((n) => !n.startsWith('_'))
  const measures = firstNumber !== undefined ? `suma:${firstNumber},media:${firstNumber}` : `min:${firstDate},max:${firstDate}`
  return {
    agrupar: Type.String({
      pattern: listOf(key, MAX_KEYS),
      description: `Hasta ${MAX_KEYS} claves de grupo separadas por comas: un campo (${v.plain.join(', ')}), o una fecha con su intervalo en la zona del servicio (${dated.map((n) => `${n}:…`).join(', ')}; :dia 2026-06-01, :semana ISO 2026-W22, :mes 2026-06, :año 2026, :hora 2026-06-01 10, esta solo de fecha y hora). Sin agrupar: un grupo con los totales. Un registro sin valor cae en el grupo de clave null`,
      examples: [`${firstKey},${firstDate}:mes`],
    }),
    medidas: Type.String({
      pattern: listOf(measure),
      description: `Medidas de cada grupo separadas por comas, medida:campo: suma, media (a dos decimales), min y max de un número${v.numbers.length > 0 ? ` (${v.numbers.join(', ')})` : ''}; min y max de una fecha (${dated.join(', ')}). Cada grupo las lleva con el nombre escrito`,
      examples: [measures],
    }),
    sort: Type.String({
      pattern: listOf(`-?${anyOf(['cantidad', key, measure])}`),
      description: 'Orden de los grupos: cantidad, una clave de agrupar o una de medidas, separados por comas, - delante para descendente (por defecto -cantidad; los empates se deshacen por cantidad, de mayor a menor, y después por las claves)',
      examples: [`-${measures.split(',')[0]}`],
    }),
    limit: Type.Integer({ minimum: 1, default: DEFAULT_LIMIT, description: `Grupos como máximo (por defecto ${DEFAULT_LIMIT}; por encima de ${MAX_LIMIT} se limita a ${MAX_LIMIT}); total_grupos dice cuántos hay`, examples: [10] }),
  }
}

/** The list's filters, `q` and `incluir_eliminados`, then the summary's own parameters (no `offset`). */
function summaryQuerystring (mod: ModuleDef, registry: Registry, timeZone: string): object {
  const list = listQuerystring(mod, registry, timeZone)
  const { limit: _l, offset: _o, sort: _s, campos: _c, expandir: _e, ...filters } = list.properties
  const own = Object.fromEntries(Object.entries(summaryParameters(mod)).map(([k, s]) => [k, Type.Optional(s)]))
  return Type.Object({ ...own, ...filters }, { additionalProperties: false })
}

/** A group: `cantidad` and, named as written, each key (null: records without a value) and measure. */
const Group = Type.Object(
  { cantidad: Type.Integer({ description: 'Registros del grupo' }) },
  { additionalProperties: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), description: 'Las claves y medidas con el nombre escrito en agrupar y medidas, p. ej. "estado", "fecha_hechos:mes", "suma:importe"' },
)

export const summary: Operation = {
  method: 'GET',
  url: '/resumen',
  action: 'ver',
  schema: (mod, { registry, timeZone, tags, operationId }) => ({
    openapi: { querystring: summaryQuerystring(mod, registry, timeZone) },
    schema: {
      tags,
      summary: `Resumen de ${mod.label}: grupos con su cantidad y medidas`,
      operationId: operationId('summary'),
      response: {
        200: envelope(Type.Object({
          grupos: Type.Array(Group),
          total_grupos: Type.Integer({ description: 'Grupos que hay (grupos lleva como máximo limit)' }),
          total: Type.Integer({ description: 'Registros que cumplen los filtros' }),
        })),
      },
    },
  }),
  async handle (request, _reply, mod) {
    return { success: true, data: await request.records.of(mod).summary(request.query as Record<string, string | string[]>) }
  },
}
