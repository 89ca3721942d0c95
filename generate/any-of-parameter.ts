/**
 * The any-of groups of a list as the OpenAPI document shows them
 * (docs/user-guide.md "Any-of filters (o[N])"): one parameter per group,
 * `o[1]` … `o[9]`, each a JSON object (`content: application/json`, set
 * for every object query parameter by http/openapi-docs.ts) mapping a
 * filter to its value (equality; a list is any of its values) or to its
 * operators and their values (`in` as a list). A generated client can
 * send that form; the bracket form (`o[1][estado]=…`) stays accepted but
 * nests too deep for OpenAPI to describe. Documentation only:
 * records/any-of-query.ts parses the groups.
 */
import type { TSchema } from '@sinclair/typebox'
import type { ListFilter } from '../records/list-query.js'
import { ANY_OF_PARAMETER, MAX_GROUPS } from '../records/any-of-query.js'
import { GROUP_SCHEMA } from '../http/openapi-docs.js'

/** The schema of filter `f`'s value under operator `op` in a JSON group. */
export type GroupValue = (f: ListFilter, op: string) => TSchema

/** What one group takes: each filter, as a value (equality) or an object of its operators. */
function groupSchema (filters: readonly ListFilter[], value: GroupValue): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const f of filters) {
    const ops = Object.fromEntries(f.operators.map((op) => [op, value(f, op)]))
    const byOperator = { type: 'object', minProperties: 1, additionalProperties: false, properties: ops }
    const eq = ops.eq as { anyOf?: unknown[] } | undefined
    properties[f.name] = eq === undefined ? byOperator : { anyOf: [...(eq.anyOf ?? [eq]), byOperator] }
  }
  return { type: 'object', minProperties: 1, additionalProperties: false, properties }
}

const name = (n: number): string => `${ANY_OF_PARAMETER}[${n}]`

/** The groups' parameters of a module's list, `o[1]` … `o[9]`, given each filter value's schema. */
export function anyOfParameters (filters: readonly ListFilter[], value: GroupValue, id: string): Record<string, TSchema> {
  // One schema for the nine groups: http/openapi-docs.ts lifts it into the components under this name.
  const group = { [GROUP_SCHEMA]: id, ...groupSchema(filters, value) }
  // An example any module's filters make: the last two filterable fields that take `vacio` (not encrypted,
  // not search-only), either with a value. Only on o[1]: the API explorer sends every example it is given.
  const [a, b] = filters.filter((f) => !f.blind && f.operators.includes('eq') && f.operators.includes('vacio')).slice(-2)
  const example = a === undefined || b === undefined ? undefined : { [a.name]: { vacio: false }, [b.name]: { vacio: false } }
  const out: Record<string, TSchema> = {}
  for (let n = 1; n <= MAX_GROUPS; n++) {
    out[name(n)] = {
      ...group,
      description: n === 1
        ? `Grupo "cualquiera de" (${name(1)} … ${name(MAX_GROUPS)}): un registro cumple un grupo si cumple cualquiera de sus condiciones, ` +
          'y debe cumplir todos los grupos y los demás filtros. El grupo es un objeto JSON: cada campo con su valor (igual a; una lista, cualquiera de sus valores) ' +
          'o con sus operadores, con los mismos operadores y tipos que los filtros; ' +
          `p. ej. ${name(1)}={"estado":"pendiente","prioridad":{"in":["alta","urgente"]}}. ` +
          `También se admite entre corchetes: ${name(1)}[estado]=pendiente&${name(1)}[prioridad][in]=alta,urgente. Un grupo mal formado: 400 que nombra el parámetro`
        : `Grupo "cualquiera de" número ${n}, como ${name(1)}`,
      ...(n === 1 && example !== undefined && { examples: [example] }),
    } as unknown as TSchema
  }
  return out
}
