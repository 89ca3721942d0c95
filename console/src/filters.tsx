/**
 * A list's filters per field, as the field's type allows (docs/user-guide.md "Console";
 * docs/user-guide.md "Listing", its table of operators by type): an enum or
 * a boolean as a choice, a date, date-time, time or number as a range, a
 * reference by picking a record of its module (the ref picker; its id is
 * sent), a string or text by `contiene`. Their inputs are named as the
 * API's parameters (`estado`, `fecha_hechos[gte]`), so the address and the
 * request carry the same query. Encrypted fields are left out: the API
 * filters them only through a blind index, for those who may decrypt.
 */
import { useState } from 'preact/hooks'
import type { FieldInfo, ModuleInfo } from './modules.js'
import { labelOf } from './modules.js'
import { RefPicker } from './ref-picker.js'

type Kind = 'choice' | 'boolean' | 'dates' | 'times' | 'numbers' | 'ref' | 'contains'

function kindOf (f: FieldInfo): Kind | undefined {
  if (f.cifrado) return undefined
  // A text field takes `contiene` with no `filterable` (the registry refuses the flag for it).
  if (f.tipo === 'text') return 'contains'
  if (!f.filtrable) return undefined
  if (f.enum !== undefined) return 'choice'
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

export function filterFields (mod: ModuleInfo): Array<FieldInfo & { kind: Kind }> {
  return mod.campos.flatMap((f) => { const kind = kindOf(f); return kind === undefined ? [] : [{ ...f, kind }] })
}

const DAY = /^\d{4}-\d{2}-\d{2}$/
const NUMBER = /^-?\d+(\.\d+)?$/
const TIME = /^\d{2}:\d{2}$/

/** The address's filter parameters as the API takes them: a date-time range covers whole days. */
export function filterQuery (mod: ModuleInfo, params: URLSearchParams): Array<[string, string]> {
  const out: Array<[string, string]> = []
  const take = (name: string, ok: (v: string) => boolean, as = (v: string) => v): void => {
    const v = params.get(name)
    if (v !== null && v !== '' && ok(v)) out.push([name, as(v)])
  }
  for (const f of filterFields(mod)) {
    if (f.kind === 'choice' || f.kind === 'ref') take(f.nombre, () => true)
    else if (f.kind === 'boolean') take(f.nombre, (v) => v === 'true' || v === 'false')
    else if (f.kind === 'contains') take(`${f.nombre}[contiene]`, () => true)
    else {
      for (const [op, time] of [['gte', ' 00:00:00'], ['lte', ' 23:59:59']] as const) {
        if (f.kind === 'numbers') take(`${f.nombre}[${op}]`, (v) => NUMBER.test(v))
        else if (f.kind === 'times') take(`${f.nombre}[${op}]`, (v) => TIME.test(v))
        else take(`${f.nombre}[${op}]`, (v) => DAY.test(v), (v) => f.tipo === 'datetime' ? v + time : v)
      }
    }
  }
  return out
}

interface FiltersProps { mod: ModuleInfo, modules: ModuleInfo[], params: URLSearchParams }

export function Filters ({ mod, modules, params }: FiltersProps) {
  const fields = filterFields(mod)
  if (fields.length === 0) return null
  return (
    <fieldset class="filters">
      <legend>Filtros</legend>
      {fields.map((f) => <Filter key={f.nombre} field={f} modules={modules} params={params} />)}
    </fieldset>
  )
}

function Filter ({ field: f, modules, params }: { field: FieldInfo & { kind: Kind }, modules: ModuleInfo[], params: URLSearchParams }) {
  const id = `f-${f.nombre}`
  const label = labelOf(f.nombre)
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
    case 'choice': return choice((f.enum ?? []).map((v) => [v, v]))
    case 'boolean': return choice([['true', 'Sí'], ['false', 'No']])
    case 'ref': return <RefFilter id={id} field={f} modules={modules} value={params.get(f.nombre) ?? ''} />
    case 'contains': {
      const name = `${f.nombre}[contiene]`
      return <span><label for={id}>{label} contiene</label><input id={id} name={name} type="search" defaultValue={params.get(name) ?? ''} /></span>
    }
    default: return (
      <>
        {(['gte', 'lte'] as const).map((op) => {
          const name = `${f.nombre}[${op}]`
          return (
            <span key={op}>
              <label for={`${id}-${op}`}>{label} {op === 'gte' ? 'desde' : 'hasta'}</label>
              {f.kind === 'numbers'
                ? <input id={`${id}-${op}`} name={name} type="number" step={f.tipo === 'integer' ? '1' : 'any'} defaultValue={params.get(name) ?? ''} />
                : <input id={`${id}-${op}`} name={name} type={f.kind === 'times' ? 'time' : 'date'} defaultValue={params.get(name) ?? ''} />}
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
  const label = <label for={id}>{labelOf(field.nombre)}</label>
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
