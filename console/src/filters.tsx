/**
 * A list's filters per field (which ones and how: filter-query.ts), as the field's type allows (docs/user-guide.md "Console";
 * docs/user-guide.md "Listing", its table of operators by type): an enum or
 * a boolean as a choice (by the values' labels), a date, date-time, time or
 * number as a range (typed in Spanish: `01/06/2026`, `200,50`; the address
 * keeps what was typed, the request the API's form), a
 * reference by picking a record of its module (the ref picker; its id is
 * sent), a string or text by `contiene`, a field whose format says so
 * (`filtro: igual`, a telephone) by its whole value. Their inputs are named as the
 * API's parameters (`estado`, `fecha_hechos[gte]`), so the address and the
 * request carry the same query. Encrypted fields are left out: the API
 * filters them only through a blind index, for those who may decrypt.
 */
import { useState } from 'preact/hooks'
import { filterFields, type FilterKind } from './filter-query.js'
import { fieldLabel, valueLabel, type FieldInfo, type ModuleInfo } from './modules.js'
import { RefPicker } from './ref-picker.js'

interface FiltersProps { mod: ModuleInfo, modules: ModuleInfo[], params: URLSearchParams, problems: Map<string, string> }

export function Filters ({ mod, modules, params, problems }: FiltersProps) {
  const fields = filterFields(mod)
  if (fields.length === 0) return null
  return (
    <fieldset class="filters">
      <legend>Filtros</legend>
      {fields.map((f) => <Filter key={f.nombre} field={f} modules={modules} params={params} problems={problems} />)}
    </fieldset>
  )
}

const PLACEHOLDER: Partial<Record<FilterKind, string>> = { dates: 'dd/mm/aaaa', times: 'hh:mm' }

function Filter ({ field: f, modules, params, problems }: { field: FieldInfo & { kind: FilterKind }, modules: ModuleInfo[], params: URLSearchParams, problems: Map<string, string> }) {
  const id = `f-${f.nombre}`
  const label = fieldLabel(f)
  // `selected` on the option: a select has no default value of its own.
  const choice = (options: Array<[string, string]>) => (
    <span>
      <label for={id}>{label}</label>
      <select id={id} name={f.nombre}>
        <option value="">(todos)</option>
        {options.map(([v, text]) => <option key={v} value={v} selected={params.get(f.nombre) === v}>{text}</option>)}
      </select>
    </span>
  )
  switch (f.kind) {
    case 'choice': return choice((f.enum ?? []).map((v) => [v, valueLabel(f, v)]))
    case 'boolean': return choice([['true', 'Sí'], ['false', 'No']])
    case 'ref': return <RefFilter id={id} field={f} modules={modules} value={params.get(f.nombre) ?? ''} />
    case 'equals':
      return <span><label for={id}>{label}</label><input id={id} name={f.nombre} type="search" inputMode={f.entrada?.modo} defaultValue={params.get(f.nombre) ?? ''} /></span>
    case 'contains': {
      const name = `${f.nombre}[contiene]`
      return <span><label for={id}>{label} contiene</label><input id={id} name={name} type="search" defaultValue={params.get(name) ?? ''} /></span>
    }
    default: return (
      <>
        {(['gte', 'lte'] as const).map((op) => {
          const name = `${f.nombre}[${op}]`
          const problem = problems.get(name)
          const inputId = `${id}-${op}`
          return (
            <span key={op}>
              <label for={inputId}>{label} {op === 'gte' ? 'desde' : 'hasta'}</label>
              {/* Text, not a native date or number box: those follow the browser's language (console/src/spanish.ts). */}
              <input id={inputId} name={name} type="text" autocomplete="off" inputMode={f.kind === 'numbers' ? 'decimal' : undefined}
                placeholder={PLACEHOLDER[f.kind]} defaultValue={params.get(name) ?? ''}
                aria-invalid={problem === undefined ? undefined : 'true'} aria-describedby={problem === undefined ? undefined : `${inputId}-error`} />
              {problem !== undefined && <span id={`${inputId}-error`} class="error">{problem}</span>}
            </span>
          )
        })}
      </>
    )
  }
}

/** A reference picked from its module's records; the picked record's id is the parameter (a hidden input of the form). */
function RefFilter ({ id, field, modules, value }: { id: string, field: FieldInfo, modules: ModuleInfo[], value: string }) {
  const [picked, setPicked] = useState(value)
  const target = modules.find((m) => m.ruta === field.ref)
  const label = <label for={id}>{fieldLabel(field)}</label>
  // Without `ver` on the referenced module: its reference typed as it is (`PER-2026-00001`).
  if (target === undefined) return <span>{label}<input id={id} name={field.nombre} type="search" defaultValue={value} /></span>
  return (
    <span>
      {label}
      <RefPicker id={id} target={target} value={value} required={false} invalid={false} onChange={setPicked} />
      <input type="hidden" name={field.nombre} value={picked} />
    </span>
  )
}
