/**
 * A list's filters per field, as the field's type allows (docs/user-guide.md "Console";
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
import { fieldLabel, valueLabel, type FieldInfo, type ModuleInfo } from './modules.js'
import { RefPicker } from './ref-picker.js'
import { parseDate, parseNumber, parseTime, type Parsed } from './spanish.js'

type Kind = 'choice' | 'boolean' | 'dates' | 'times' | 'numbers' | 'ref' | 'contains' | 'equals'

function kindOf (f: FieldInfo): Kind | undefined {
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

export function filterFields (mod: ModuleInfo): Array<FieldInfo & { kind: Kind }> {
  return mod.campos.flatMap((f) => { const kind = kindOf(f); return kind === undefined ? [] : [{ ...f, kind }] })
}

/** A range bound as typed, read as the API takes it; undefined for a field with no range. */
function bound (f: FieldInfo & { kind: Kind }, text: string): Parsed<string> | undefined {
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

const PLACEHOLDER: Partial<Record<Kind, string>> = { dates: 'dd/mm/aaaa', times: 'hh:mm' }

function Filter ({ field: f, modules, params, problems }: { field: FieldInfo & { kind: Kind }, modules: ModuleInfo[], params: URLSearchParams, problems: Map<string, string> }) {
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
