/**
 * The shape of a list's query, without its values (docs/administrator-guide.md
 * "Indexes"): the parameters it used (`estado`, `tipo[contiene]`, `q`,
 * `o[1][campo]`) and the fields it sorted on, so that a slow list can be
 * logged for an administrator to see what to index, and nothing searched
 * for (a name, a DNI) reaches the log.
 */
export interface FilterShape {
  readonly parametros: string[]
  readonly orden?: string
}

/** Paging and read-shape parameters say nothing about what an index would serve. */
const PAGING = new Set(['limit', 'offset', 'campos', 'expandir'])

export function filterShape (query: Record<string, string | string[] | undefined>): FilterShape {
  const parametros = Object.keys(query).filter((k) => query[k] !== undefined && !PAGING.has(k) && k !== 'sort')
  // A list that answered had a valid sort: field names, never a value.
  const sort = query.sort
  return { parametros, ...(typeof sort === 'string' && { orden: sort }) }
}
