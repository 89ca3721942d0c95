/**
 * A list's filters per field, as the field's type allows (SPEC S19): an
 * enum as a choice, a date or date-time as a range. Their inputs are named
 * as the API's parameters (`estado`, `fecha_hechos[gte]`), so the address
 * and the request carry the same query.
 */
import type { FieldInfo, ModuleInfo } from './modules.js'
import { labelOf } from './modules.js'

const RANGE_TYPES = new Set(['date', 'datetime'])

export function filterFields (mod: ModuleInfo): FieldInfo[] {
  return mod.campos.filter((f) => f.filtrable && (f.enum !== undefined || RANGE_TYPES.has(f.tipo)))
}

/** The address's filter parameters as the API takes them: a date-time range covers whole days. */
export function filterQuery (mod: ModuleInfo, params: URLSearchParams): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const f of filterFields(mod)) {
    if (f.enum !== undefined) {
      const v = params.get(f.nombre)
      if (v !== null && v !== '') out.push([f.nombre, v])
      continue
    }
    for (const [op, time] of [['gte', ' 00:00:00'], ['lte', ' 23:59:59']] as const) {
      const v = params.get(`${f.nombre}[${op}]`)
      if (v !== null && /^\d{4}-\d{2}-\d{2}$/.test(v)) out.push([`${f.nombre}[${op}]`, f.tipo === 'datetime' ? v + time : v])
    }
  }
  return out
}

export function Filters ({ mod, params }: { mod: ModuleInfo, params: URLSearchParams }) {
  const fields = filterFields(mod)
  if (fields.length === 0) return null
  return (
    <fieldset class="filters">
      <legend>Filtros</legend>
      {fields.map((f) => f.enum !== undefined
        ? (
          <span key={f.nombre}>
            <label for={`f-${f.nombre}`}>{labelOf(f.nombre)}</label>
            {/* `selected` on the option: a select has no default value of its own. */}
            <select id={`f-${f.nombre}`} name={f.nombre}>
              <option value="">(todos)</option>
              {f.enum.map((v) => <option key={v} value={v} selected={params.get(f.nombre) === v}>{v}</option>)}
            </select>
          </span>
          )
        : (['gte', 'lte'] as const).map((op) => (
          <span key={`${f.nombre}-${op}`}>
            <label for={`f-${f.nombre}-${op}`}>{labelOf(f.nombre)} {op === 'gte' ? 'desde' : 'hasta'}</label>
            <input id={`f-${f.nombre}-${op}`} name={`${f.nombre}[${op}]`} type="date" defaultValue={params.get(`${f.nombre}[${op}]`) ?? ''} />
          </span>
        )))}
    </fieldset>
  )
}
