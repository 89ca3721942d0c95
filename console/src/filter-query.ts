/**
 * A list's filters as data (docs/user-guide.md "Console"): which fields a
 * list filters and how (filters.tsx draws them), and the address's filter
 * parameters read as the API takes them, bounds typed in Spanish
 * (`01/06/2026`, `200,50`) turned into the API's form. Pure.
 */
import type { FieldInfo, ModuleInfo } from './modules.js'
import { parseDate, parseNumber, parseTime, type Parsed } from './spanish.js'

export type FilterKind = 'choice' | 'boolean' | 'dates' | 'times' | 'numbers' | 'ref' | 'contains' | 'equals'

function kindOf (f: FieldInfo): FilterKind | undefined {
  if (f.cifrado) return undefined
  // A text field takes `contiene` with no `filterable` (the registry refuses the flag for it).
  if (f.tipo === 'text') return 'contains'
  if (!f.filtrable) return undefined
  if (f.enum !== undefined) return 'choice'
  // A format says how it is filtered: a telephone by the whole number, which the API reads in any form it accepts.
  if (f.filtro === 'igual') return 'equals'
  if (f.filtro === 'contiene') return 'contains'
  switch (f.tipo) {
    case 'boolean': return 'boolean'
    case 'date': case 'datetime': return 'dates'
    case 'time': return 'times'
    case 'integer': case 'decimal': return 'numbers'
    case 'ref': return 'ref'
    case 'string': return 'contains'
    default: return undefined
  }
}

export function filterFields (mod: ModuleInfo): Array<FieldInfo & { kind: FilterKind }> {
  return mod.campos.flatMap((f) => { const kind = kindOf(f); return kind === undefined ? [] : [{ ...f, kind }] })
}

/** A range bound as typed, read as the API takes it; undefined for a field with no range. */
function bound (f: FieldInfo & { kind: FilterKind }, text: string): Parsed<string> | undefined {
  if (f.kind === 'numbers') {
    const n = parseNumber(text, f.tipo === 'integer' ? 0 : 2)
    return 'value' in n ? { value: String(n.value) } : n
  }
  if (f.kind === 'times') return parseTime(text)
  if (f.kind === 'dates') return parseDate(text)
  return undefined
}

const RANGE = [['gte', ' 00:00:00'], ['lte', ' 23:59:59']] as const

/** The address's filter parameters as the API takes them: a date-time range covers whole days; a bound that does not read is left out. */
export function filterQuery (mod: ModuleInfo, params: URLSearchParams): Array<[string, string]> {
  const out: Array<[string, string]> = []
  const take = (name: string, ok: (v: string) => boolean, as = (v: string) => v): void => {
    const v = params.get(name)
    if (v !== null && v !== '' && ok(v)) out.push([name, as(v)])
  }
  for (const f of filterFields(mod)) {
    if (f.kind === 'choice' || f.kind === 'ref' || f.kind === 'equals') take(f.nombre, () => true)
    else if (f.kind === 'boolean') take(f.nombre, (v) => v === 'true' || v === 'false')
    else if (f.kind === 'contains') take(`${f.nombre}[contiene]`, () => true)
    else {
      for (const [op, time] of RANGE) {
        const read = (v: string): Parsed<string> | undefined => bound(f, v.trim())
        take(`${f.nombre}[${op}]`, (v) => { const b = read(v); return b !== undefined && 'value' in b },
          (v) => { const b = read(v) as { value: string }; return f.tipo === 'datetime' ? b.value + time : b.value })
      }
    }
  }
  return out
}

/** The range bounds of a submitted filter form that do not read, by input name (`fecha_hechos[gte]`), in the API's words. */
export function filterProblems (mod: ModuleInfo, form: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>()
  for (const f of filterFields(mod)) {
    for (const [op] of RANGE) {
      const name = `${f.nombre}[${op}]`
      const v = form[name]
      const b = v === undefined || v === '' ? undefined : bound(f, v)
      if (b !== undefined && 'problem' in b) out.set(name, b.problem)
    }
  }
  return out
}
