/**
 * One field of a generated form (docs/user-guide.md "Console"), by its type: choices
 * for an enum, native date, date-time and time pickers, a number, a check
 * box, a text area, a ref picker, a structured array as repeatable groups.
 * Labelled with the field's name; its problem (the browser's check or the
 * API's `detalles`) beside it, tied with aria-describedby.
 */
import type { JSX } from 'preact'
import { requiredNow, type FormValue, type Item } from './form-values.js'
import { labelOf, type FieldInfo, type ModuleInfo } from './modules.js'
import { RefPicker } from './ref-picker.js'
import { Restricted } from './list-screen.js'

export interface InputProps {
  field: FieldInfo
  value: FormValue
  problems: Map<string, string>
  /** Beside a field after a version conflict: what the record holds now, when it differs from the form. */
  stored?: string
  restricted: boolean
  editing: boolean
  modules: ModuleInfo[]
  onChange: (value: FormValue) => void
}

const NOW = 'Vacío: la fecha y hora del registro'
const INPUT_TYPES: Record<string, string> = { integer: 'number', decimal: 'number', date: 'date', datetime: 'datetime-local', time: 'time', password: 'password' }

export function FieldInput ({ field, value, problems, stored, restricted, editing, modules, onChange }: InputProps) {
  const id = `campo-${field.nombre}`
  const label = labelOf(field.nombre)
  if (restricted) {
    return <div class="field"><span class="label">{label}</span><p><Restricted /> Su rol no puede ver ni cambiar este dato.</p></div>
  }
  if (Array.isArray(value) && field.elementos !== undefined) return <Group field={field} items={value} problems={problems} onChange={onChange} />
  const problem = problems.get(field.nombre)
  // A create leaves an empty date or date-time with default `now` to the service's clock.
  const now = !editing && field.por_defecto === 'now'
  const notes = [field.descripcion === undefined && !now ? undefined : `${id}-ayuda`, stored === undefined ? undefined : `${id}-guardado`, problem === undefined ? undefined : `${id}-error`].filter((x) => x !== undefined).join(' ')
  return (
    <div class="field">
      <label for={id}>{label}{requiredNow(field, editing) && <span aria-hidden="true"> *</span>}</label>
      {field.descripcion !== undefined && <span id={`${id}-ayuda`} class="hint">{[field.descripcion, now ? NOW : undefined].filter((x) => x !== undefined).join('. ')}</span>}
      {field.descripcion === undefined && now && <span id={`${id}-ayuda`} class="hint">{NOW}</span>}
      <Control id={id} field={field} value={value} invalid={problem !== undefined} describedBy={notes === '' ? undefined : notes} editing={editing} modules={modules} onChange={onChange} />
      {stored !== undefined && <span id={`${id}-guardado`} class="notice">Valor guardado ahora: {stored === '' ? '(vacío)' : stored}</span>}
      {problem !== undefined && <span id={`${id}-error`} class="error">{problem}</span>}
    </div>
  )
}

interface ControlProps { id: string, field: FieldInfo, value: FormValue, invalid: boolean, describedBy?: string, editing?: boolean, modules: ModuleInfo[], onChange: (value: FormValue) => void }

function Control ({ id, field, value, invalid, describedBy, editing = false, modules, onChange }: ControlProps): JSX.Element {
  const common = { id, 'aria-invalid': invalid ? 'true' as const : undefined, 'aria-describedby': describedBy, required: requiredNow(field, editing) && !(editing && field.tipo === 'password') }
  const text = (e: Event): void => onChange((e.currentTarget as HTMLInputElement).value)
  if (field.tipo === 'boolean') return <input {...common} required={false} type="checkbox" checked={value === true} onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)} />
  if (field.enum !== undefined) {
    return (
      <select {...common} value={String(value)} onChange={text}>
        <option value="">(sin valor)</option>
        {field.enum.map((v) => <option key={v} value={v}>{v}</option>)}
      </select>
    )
  }
  if (field.tipo === 'ref') {
    const target = modules.find((m) => m.ruta === field.ref)
    if (target !== undefined) return <RefPicker id={id} target={target} value={String(value)} required={common.required} invalid={invalid} describedBy={describedBy} onChange={onChange} />
  }
  if (field.tipo === 'text' || (field.tipo === 'array' && field.elementos === undefined)) {
    return <textarea {...common} rows={field.tipo === 'text' ? 4 : 3} value={String(value)} onInput={text} />
  }
  const extra: Record<string, string | number> = { type: INPUT_TYPES[field.tipo] ?? 'text' }
  if (field.tipo === 'decimal') extra.step = 'any'
  if (field.tipo === 'datetime') extra.step = 1
  if (field.tipo === 'password') extra.autocomplete = 'new-password'
  return <input {...common} {...extra} value={String(value)} onInput={text} />
}

/** A structured array: one group per item, `Añadir` and `Quitar`; sub-fields' problems keyed `testigos[0].nombre` as the API's. */
function Group ({ field, items, problems, onChange }: { field: FieldInfo, items: Item[], problems: Map<string, string>, onChange: (value: FormValue) => void }) {
  const label = labelOf(field.nombre)
  const subs = field.elementos ?? []
  const problem = problems.get(field.nombre)
  const empty = (): Item => Object.fromEntries(subs.map((s) => [s.nombre, s.tipo === 'boolean' ? false : '']))
  return (
    <fieldset class="group" aria-describedby={problem === undefined ? undefined : `campo-${field.nombre}-error`}>
      <legend>{label}</legend>
      {field.descripcion !== undefined && <p class="hint">{field.descripcion}</p>}
      {items.map((item, i) => (
        <fieldset key={i} class="item">
          <legend>{label} {i + 1}</legend>
          {subs.map((s) => {
            const key = `${field.nombre}[${i}].${s.nombre}`
            const id = `campo-${field.nombre}-${i}-${s.nombre}`
            const p = problems.get(key)
            return (
              <div class="field" key={s.nombre}>
                <label for={id}>{labelOf(s.nombre)}{s.obligatorio && <span aria-hidden="true"> *</span>}</label>
                <Control id={id} field={s} value={item[s.nombre] ?? ''} invalid={p !== undefined} describedBy={p === undefined ? undefined : `${id}-error`} modules={[]}
                  onChange={(v) => onChange(items.map((it, j) => j === i ? { ...it, [s.nombre]: v as string | boolean } : it))} />
                {p !== undefined && <span id={`${id}-error`} class="error">{p}</span>}
              </div>
            )
          })}
          <button type="button" class="secondary" onClick={() => onChange(items.filter((_, j) => j !== i))}>Quitar {label.toLowerCase()} {i + 1}</button>
        </fieldset>
      ))}
      <button type="button" class="secondary" onClick={() => onChange([...items, empty()])}>Añadir a {label.toLowerCase()}</button>
      {problem !== undefined && <p id={`campo-${field.nombre}-error`} class="error">{problem}</p>}
    </fieldset>
  )
}
