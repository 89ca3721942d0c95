/**
 * The any-of groups of a list as the OpenAPI document shows them
 * (docs/user-guide.md "Any-of filters (o[N])"): one `o` parameter, an object
 * sent in brackets (`style: deepObject`, set for every object query
 * parameter by http/openapi-docs.ts), groups `1` … `9`, each mapping a
 * filter to its value (equality) or to its operators and their values.
 * Each value's schema is the one the plain filter's parameter has, so the
 * two cannot drift apart. Documentation only: records/any-of-query.ts
 * parses the groups.
 */
import type { TSchema } from '@sinclair/typebox'
import type { ListFilter } from '../records/list-query.js'
import { ANY_OF_PARAMETER, MAX_GROUPS } from '../records/any-of-query.js'

/** A parameter's schema without its description (the plain parameter's words). */
function bare (schema: TSchema | undefined): Record<string, unknown> {
  const { description: _d, ...rest } = (schema ?? { type: 'string' }) as Record<string, unknown>
  return rest
}

/** What one group takes: each filter, as a value (equality) or an object of its operators. */
function groupSchema (filters: readonly ListFilter[], parameters: Readonly<Record<string, TSchema>>): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const f of filters) {
    const ops = Object.fromEntries(f.operators.map((op) => [op, bare(parameters[op === 'eq' ? f.name : `${f.name}[${op}]`])]))
    const byOperator = { type: 'object', minProperties: 1, additionalProperties: false, properties: ops }
    properties[f.name] = f.operators.includes('eq') ? { anyOf: [ops.eq, byOperator] } : byOperator
  }
  return { type: 'object', minProperties: 1, additionalProperties: false, properties }
}

/**
 * The `o` parameter's schema for a module's filters, given the plain
 * filter parameters' schemas by name (`estado`, `estado[in]` …).
 */
export function anyOfParameter (filters: readonly ListFilter[], parameters: Readonly<Record<string, TSchema>>): TSchema {
  // An example any module's filters make: the last two that take `vacio` (not encrypted), either with a value.
  const [a, b] = filters.filter((f) => !f.blind && f.operators.includes('vacio')).slice(-2)
  const example = a === undefined || b === undefined ? undefined : { 1: { [a.name]: { vacio: false }, [b.name]: { vacio: false } } }
  return {
    type: 'object',
    description: `Grupos "cualquiera de" (${ANY_OF_PARAMETER}[1] … ${ANY_OF_PARAMETER}[${MAX_GROUPS}]): un registro cumple un grupo si cumple cualquiera de sus condiciones, ` +
      'y debe cumplir todos los grupos y los demás filtros. Cada condición se escribe como un filtro: ' +
      `${ANY_OF_PARAMETER}[N][campo]=valor (igual a) u ${ANY_OF_PARAMETER}[N][campo][operador]=valor, con los mismos operadores y tipos; ` +
      `p. ej. ${ANY_OF_PARAMETER}[1][estado]=pendiente&${ANY_OF_PARAMETER}[1][prioridad][in]=alta,urgente. Un grupo mal formado: 400 que nombra el parámetro`,
    // Group numbers as propertyNames (@fastify/swagger turns patternProperties into additionalProperties).
    propertyNames: { pattern: `^[1-${MAX_GROUPS}]$` },
    maxProperties: MAX_GROUPS,
    additionalProperties: groupSchema(filters, parameters),
    ...(example !== undefined && { examples: [example] }),
  } as unknown as TSchema
}
