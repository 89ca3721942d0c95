/**
 * `expandir`: related records in place of their ids (docs/user-guide.md
 * "Choosing fields and related records (campos, expandir)"). Each named
 * `ref` value becomes the referenced record as the caller may see it: read
 * through the caller's records service of the target module (its `ver`,
 * row-level scope, decrypt-or-withhold and read log), one query per
 * expanded field for the whole page. A reference that service does not
 * return (outside the caller's sight, deleted, missing) keeps its id and is
 * named in the record's `_sin_expandir`. One level deep: an expanded
 * record's own references stay ids.
 */
import { invalid } from '../core/errors.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { apiHint } from '../core/registry/suggest.js'
import { nameList, parseFields, type FieldSelection } from './fields-query.js'
import type { ApiRecord } from './records-service.js'

/** One field to expand: the ref, its target module, and the target's fields `campos` named (`x.y`). */
export interface Expansion {
  readonly field: FieldDef
  readonly target: ModuleDef
  readonly fields?: FieldSelection
}

/** What a read returns: its fields (undefined: all) and the refs it expands. */
export interface ReadShape {
  readonly fields?: FieldSelection
  readonly expand: readonly Expansion[]
}

/** The records of another module the caller may see, by id (RecordsService.related). */
export interface RelatedRecords {
  related (ids: readonly string[], fields?: FieldSelection): Promise<ApiRecord[]>
}

/** The one shape without `campos` or `expandir`: the plain path allocates nothing. */
const PLAIN: ReadShape = { expand: [] }

/**
 * `campos` and `expandir` of a read of `mod`; `moduleNamed` finds a ref's
 * target. Unknown names, and `expandir` on a field that is no `ref`, are a
 * 400 naming the parameter.
 */
export function parseReadShape (mod: ModuleDef, campos: string | string[] | undefined, expandir: string | string[] | undefined, moduleNamed: (name: string) => ModuleDef | undefined): ReadShape {
  if (campos === undefined && expandir === undefined) return PLAIN
  const targets = new Map<string, ModuleDef>()
  const refs = mod.fields.filter((f) => f.type === 'ref')
  for (const name of expandir === undefined ? [] : nameList('expandir', expandir)) {
    const f = mod.fieldMap.get(name)
    if (f === undefined) throw invalid('expandir', `campo desconocido "${name}"${apiHint(name, refs.map((r) => r.name))}`)
    const target = f.type === 'ref' && f.ref !== undefined ? moduleNamed(f.ref) : undefined
    if (target === undefined) throw invalid('expandir', `"${name}" no es una referencia a otro registro${apiHint(name, refs.map((r) => r.name))}`)
    targets.set(name, target)
  }
  const { selection, nested } = parseFields(mod, campos, targets)
  const expand = [...targets].map(([name, target]) => {
    const fields = nested.get(name)
    return { field: mod.fieldMap.get(name)!, target, ...(fields !== undefined && { fields }) }
  })
  return { ...(selection !== undefined && { fields: selection }), expand }
}

/** A list's query without `campos` and `expandir`, for the list parser (records/list-query.ts); copied only when they are there. */
export function withoutReadShape<Q extends Record<string, unknown>> (query: Q): Q {
  if (query.campos === undefined && query.expandir === undefined) return query
  const { campos: _c, expandir: _e, ...rest } = query
  return rest as Q
}

/** Replaces the refs of `records` by the related records (in place), one read of `related` per expanded field. */
export async function expandRecords (records: ApiRecord[], expand: readonly Expansion[], related: (target: ModuleDef) => RelatedRecords): Promise<void> {
  for (const e of expand) {
    const name = e.field.name
    const ids = new Set<string>()
    for (const rec of records) if (typeof rec[name] === 'string') ids.add(rec[name])
    if (ids.size === 0) continue
    const found = await related(e.target).related([...ids], e.fields)
    const byId = new Map(found.map((r) => [r._id as string, r]))
    for (const rec of records) {
      const id = rec[name]
      if (typeof id !== 'string') continue
      const target = byId.get(id)
      if (target !== undefined) rec[name] = target
      else ((rec._sin_expandir ??= []) as string[]).push(name)
    }
  }
}
