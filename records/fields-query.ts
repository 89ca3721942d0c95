/**
 * `campos`: which fields a read returns (docs/user-guide.md "Choosing fields
 * and related records (campos, expandir)"). Parsed once per request into a
 * FieldSelection the records service reads three things from: the keys of
 * the answer (the record view of records/view-builder.ts, projected), the
 * columns the database reads, and the encrypted fields named (only those
 * are decrypted or withheld, and logged). Pure; used by a list, a GET by id
 * and an export, and for the records an `expandir` brings (records/expansion.ts).
 */
import { invalid } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import { apiHint } from '../core/registry/suggest.js'
import { SYSTEM_FIELDS, systemField } from '../core/system-fields.js'
import { typeOf } from '../core/field-types/index.js'
import { valueColumn } from '../db/columns.js'
import { subFieldPaths } from './item-fields.js'

export interface FieldSelection {
  /** The keys the answer carries: `_id` and the named fields (system ones included). */
  readonly names: ReadonlySet<string>
  /** Identifies the projection (its names in record order): its record view is cached under it. */
  readonly key: string
  /** The encrypted fields named, in declared order: the only ones decrypted, withheld or logged. */
  readonly encrypted: readonly string[]
  /** The row columns the answer needs (`_id`, named system fields, the value columns of named fields). */
  readonly columns: readonly string[]
}

/** The fields `campos` takes on `mod`, in record order: system fields and every declared field a record shows. */
export function selectable (mod: ModuleDef): string[] {
  const shown = mod.fields.filter((f) => !typeOf(f).writeOnly).map((f) => f.name)
  return [...SYSTEM_FIELDS.filter((s) => s.leads).map((s) => s.name), ...shown, ...SYSTEM_FIELDS.filter((s) => !s.leads).map((s) => s.name)]
}

/** A comma-separated list parameter, given once and not empty. */
export function nameList (param: string, raw: string | string[]): string[] {
  if (Array.isArray(raw) && raw.length !== 1) throw invalid(param, 'no admite varios valores')
  const text = Array.isArray(raw) ? raw[0]! : raw
  const names = text.split(',').map((n) => n.trim())
  if (names.some((n) => n === '')) throw invalid(param, 'debe ser una lista de campos separados por comas')
  if (names.length > 200) throw invalid(param, 'admite como máximo 200 campos')
  return names
}

/** The selection of `names` (each a field of `mod`, checked): `param` is the parameter a 400 names. */
export function selectionOf (mod: ModuleDef, names: Iterable<string>, param = 'campos', prefix = ''): FieldSelection {
  const all = selectable(mod)
  const wanted = new Set(['_id'])
  for (const name of names) {
    if (!all.includes(name)) throw invalid(param, `campo desconocido "${prefix}${name}"${apiHint(name, all)}`)
    wanted.add(name)
  }
  const ordered = all.filter((n) => wanted.has(n))
  const columns = ordered.map((n) => systemField(n) !== undefined ? n : valueColumn(mod.fieldMap.get(n)!))
  // A structured array with encrypted sub-fields counts by their paths (`testigos.dni`, records/item-fields.ts).
  const encrypted = ordered.flatMap((n) => { const f = mod.fieldMap.get(n); return f === undefined ? [] : f.encrypted ? [n] : subFieldPaths(f) })
  return { names: new Set(ordered), key: ordered.join(','), encrypted, columns }
}

/**
 * `campos` of `mod` (undefined: every field). A dotted name `x.y` names
 * field `y` of the record that `expandir` brings for `x` (`expanded`: the
 * target module of each expanded field): each such x gets its own
 * selection in `nested`, and x itself is returned. Without `expanded`
 * (an export), a dotted name is a 400 like any unknown field.
 */
export function parseFields (mod: ModuleDef, raw: string | string[] | undefined, expanded: ReadonlyMap<string, ModuleDef> = new Map()): { selection?: FieldSelection, nested: Map<string, FieldSelection> } {
  const nested = new Map<string, FieldSelection>()
  if (raw === undefined) return { nested }
  const top: string[] = []
  const inner = new Map<string, string[]>()
  for (const name of nameList('campos', raw)) {
    const dot = name.indexOf('.')
    if (dot < 0) { top.push(name); continue }
    const [outer, field] = [name.slice(0, dot), name.slice(dot + 1)]
    if (!expanded.has(outer)) throw invalid('campos', `"${name}": "${outer}" no se expande; añádalo a expandir${apiHint(outer, [...expanded.keys()])}`)
    inner.set(outer, [...(inner.get(outer) ?? []), field])
  }
  for (const [outer, fields] of inner) nested.set(outer, selectionOf(expanded.get(outer)!, fields, 'campos', `${outer}.`))
  // An expanded field is part of the answer: expanding it is asking for it.
  return { selection: selectionOf(mod, [...top, ...expanded.keys()]), nested }
}

/** Columns of `mod` that decide whether a row is the caller's own (records/scope.ts `isOwn`): read beside a projection that a `descifrar:propios` decision needs. */
export function ownerColumns (mod: ModuleDef): string[] {
  return ['_id', '_created_by', ...mod.ownerFields.map(valueColumn)]
}
