/**
 * One field of a generated form (docs/user-guide.md "Console"), by its type: choices
 * for an enum (by their labels), dates, date-times, times and numbers as
 * text in Spanish order and with a decimal comma whatever the browser's
 * language (console/src/spanish.ts; a native date picker follows the
 * browser's), a check box, a text area, a ref picker, a structured array
 * as repeatable groups. Labelled with the field's label (else its name);
 * under the input its help (`ayuda`, else `description`) and the format
 * expected; its problem (the browser's check or the API's `detalles`)
 * beside it, tied with aria-describedby.
 */
import type { JSX } from 'preact'
import { requiredNow, type FormValue, type Item } from './form-values.js'
import { fieldLabel, inSentence, singular, valueLabel, type FieldInfo, type ModuleInfo } from './modules.js'
import { RefPicker } from './ref-picker.js'
import { Restricted } from './shown.js'

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

/** What a typed field expects, said under its input: its format's words (`entrada`), else its type's. */
export function formatHint (f: FieldInfo): string | undefined {
  if (f.entrada?.indicacion !== undefined) return f.entrada.indicacion
  switch (f.tipo) {
    case 'date': return 'Formato dd/mm/aaaa'
    case 'datetime': return 'Formato dd/mm/aaaa hh:mm'
    case 'time': return 'Formato hh:mm (24 horas)'
    case 'decimal': return 'Con coma decimal (200,50)'
    default: return undefined
  }
}

export function FieldInput ({ field, value, problems, stored, restricted, editing, modules, onChange }: InputProps) {
  const id = `campo-${field.nombre}`
  const label = fieldLabel(field)
  if (restricted) {
    return <div class="field"><span class="label">{label}</span><p><Restricted /> Su rol no puede ver ni cambiar este dato.</p></div>
  }
  if (Array.isArray(value) && field.elementos !== undefined) return <Group field={field} items={value} problems={problems} onChange={onChange} />
  const problem = problems.get(field.nombre)
  // A create leaves an empty date or date-time with default `now` to the service's clock.
  const now = !editing && field.por_defecto === 'now'
  const hint = [field.ayuda ?? field.descripcion, formatHint(field), now ? NOW : undefined].filter((x) => x !== undefined).join('. ')
  const notes = [hint === '' ? undefined : `${id}-ayuda`, stored === undefined ? undefined : `${id}-guardado`, problem === undefined ? undefined : `${id}-error`].filter((x) => x !== undefined).join(' ')
  return (
    <div class="field">
      <label for={id}>{label}{requiredNow(field, editing) && <span aria-hidden="true"> *</span>}</label>
      <Control id={id} field={field} value={value} invalid={problem !== undefined} describedBy={notes === '' ? undefined : notes} editing={editing} modules={modules} onChange={onChange} />
      {hint !== '' && <span id={`${id}-ayuda`} class="hint">{hint}</span>}
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
        {field.enum.map((v) => <option key={v} value={v}>{valueLabel(field, v)}</option>)}
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
  // Dates, times and numbers as text: a native picker or number box follows the browser's language, not Spanish (console/src/spanish.ts reads them).
  const extra: Record<string, string | number> = { type: field.tipo === 'password' ? 'password' : 'text' }
  if (field.tipo === 'integer' || field.tipo === 'decimal') extra.inputMode = field.tipo === 'integer' ? 'numeric' : 'decimal'
  if (['date', 'datetime', 'time', 'integer', 'decimal'].includes(field.tipo)) extra.autocomplete = 'off'
  if (field.tipo === 'password') extra.autocomplete = 'new-password'
  // A format says how its value is asked for (a telephone's keypad).
  const input = field.entrada
  if (input !== undefined) {
    extra.type = input.tipo
    if (input.modo !== undefined) extra.inputMode = input.modo
    if (input.autocompletar !== undefined) extra.autocomplete = input.autocompletar
  }
  return <input {...common} {...extra} value={String(value)} onInput={text} />
}

/** A structured array: one group per item (`Testigo 1`), `Añadir testigo` and `Quitar testigo 1`; sub-fields' problems keyed `testigos[0].nombre` as the API's. */
function Group ({ field, items, problems, onChange }: { field: FieldInfo, items: Item[], problems: Map<string, string>, onChange: (value: FormValue) => void }) {
  const label = fieldLabel(field)
  const one = singular(label)
  // `Añadir testigo`; an initialism kept (`Añadir DNI`).
  const lower = inSentence(one)
  const subs = field.elementos ?? []
  const problem = problems.get(field.nombre)
  const help = field.ayuda ?? field.descripcion
  const empty = (): Item => Object.fromEntries(subs.map((s) => [s.nombre, s.tipo === 'boolean' ? false : '']))
  return (
    <fieldset class="group" aria-describedby={problem === undefined ? undefined : `campo-${field.nombre}-error`}>
      <legend>{label}</legend>
      {help !== undefined && <p class="hint">{help}</p>}
      {items.map((item, i) => (
        <fieldset key={i} class="item">
          <legend>{one} {i + 1}</legend>
          {subs.map((s) => {
            const key = `${field.nombre}[${i}].${s.nombre}`
            const id = `campo-${field.nombre}-${i}-${s.nombre}`
            const p = problems.get(key)
            const hint = [s.ayuda ?? s.descripcion, formatHint(s)].filter((x) => x !== undefined).join('. ')
            const notes = [hint === '' ? undefined : `${id}-ayuda`, p === undefined ? undefined : `${id}-error`].filter((x) => x !== undefined).join(' ')
            return (
              <div class="field" key={s.nombre}>
                <label for={id}>{fieldLabel(s)}{s.obligatorio && <span aria-hidden="true"> *</span>}</label>
                <Control id={id} field={s} value={item[s.nombre] ?? ''} invalid={p !== undefined} describedBy={notes === '' ? undefined : notes} modules={[]}
                  onChange={(v) => onChange(items.map((it, j) => j === i ? { ...it, [s.nombre]: v as string | boolean } : it))} />
                {hint !== '' && <span id={`${id}-ayuda`} class="hint">{hint}</span>}
                {p !== undefined && <span id={`${id}-error`} class="error">{p}</span>}
              </div>
            )
          })}
          <button type="button" class="secondary" onClick={() => onChange(items.filter((_, j) => j !== i))}>Quitar {lower} {i + 1}</button>
        </fieldset>
      ))}
      <button type="button" class="secondary" onClick={() => onChange([...items, empty()])}>Añadir {lower}</button>
      {problem !== undefined && <p id={`campo-${field.nombre}-error`} class="error">{problem}</p>}
    </fieldset>
  )
}
