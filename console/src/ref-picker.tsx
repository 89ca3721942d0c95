/**
 * A `ref` field's input (docs/user-guide.md "Console"): an ARIA
 * 1.2 combobox over the referenced module's list searched with `q`, its
 * choices named as the records are (modules.ts nameOf). Arrow keys move,
 * Enter picks, Escape closes; a typed reference (`PER-2026-00001`) is
 * taken as it is. Without `ver` on that module, a plain text input.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { request } from './api.js'
import { nameFields, nameOf, type ModuleInfo } from './modules.js'

interface Choice { id: string, label: string }
const SHOWN = 8

export interface PickerProps {
  id: string
  target: ModuleInfo
  value: string
  required: boolean
  describedBy?: string
  invalid: boolean
  onChange: (value: string) => void
}

export function RefPicker ({ id, target, value, required, describedBy, invalid, onChange }: PickerProps) {
  const [text, setText] = useState(value)
  const [choices, setChoices] = useState<Choice[]>([])
  const [open, setOpen] = useState(false)
  const [active, setActive] = useState(-1)
  const [searched, setSearched] = useState(false)
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  const listId = `${id}-opciones`
  const campos = nameFields(target).join(',')

  // The stored reference the form opened with, shown by its record's name (a typed one stays as typed).
  useEffect(() => {
    // Only a record's id is looked up (core/ids.ts's shape): a filter may hold a name typed but never picked.
    if (!new RegExp(`^${target.prefijo}-\\d{4}-\\d{5,}$`).test(value)) return
    request<{ data: Record<string, unknown> }>('GET', `/${target.ruta}/${encodeURIComponent(value)}${campos === '' ? '' : `?campos=${campos}`}`)
      .then((res) => setText((t) => t === value ? `${nameOf(target, res.data)} (${value})` : t), () => undefined)
  }, [])

  const search = (q: string): void => {
    clearTimeout(timer.current)
    if (q.trim() === '') { setChoices([]); setOpen(false); return }
    timer.current = setTimeout(() => {
      const query = new URLSearchParams({ q: q.trim(), limit: String(SHOWN) })
      if (campos !== '') query.set('campos', campos)
      request<{ data: { records: Array<Record<string, unknown>> } }>('GET', `/${target.ruta}?${query.toString()}`).then((res) => {
        setChoices(res.data.records.map((r) => ({ id: String(r._id), label: `${nameOf(target, r)} (${String(r._id)})` })))
        setActive(-1)
        setSearched(true)
        setOpen(true)
      }, () => setChoices([]))
    }, 250)
  }
  useEffect(() => () => clearTimeout(timer.current), [])

  const pick = (c: Choice): void => {
    setText(c.label)
    onChange(c.id)
    setOpen(false)
    setActive(-1)
  }
  const keyDown = (e: KeyboardEvent): void => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      if (!open) { if (choices.length > 0) setOpen(true); return }
      const n = choices.length
      if (n > 0) setActive((a) => e.key === 'ArrowDown' ? (a + 1) % n : (a <= 0 ? n - 1 : a - 1))
    } else if (e.key === 'Enter' && open && active >= 0 && choices[active] !== undefined) {
      e.preventDefault()
      pick(choices[active])
    } else if (e.key === 'Escape' && open) {
      e.preventDefault()
      setOpen(false)
      setActive(-1)
    }
  }

  return (
    <div class="picker">
      <input
        id={id} type="text" role="combobox" autocomplete="off" required={required}
        aria-autocomplete="list" aria-expanded={open ? 'true' : 'false'} aria-controls={listId}
        aria-activedescendant={open && active >= 0 ? `${listId}-${active}` : undefined}
        aria-invalid={invalid ? 'true' : undefined} aria-describedby={describedBy}
        value={text}
        onInput={(e) => { const t = (e.currentTarget as HTMLInputElement).value; setText(t); onChange(t.trim()); search(t) }}
        onKeyDown={keyDown}
        onBlur={() => setOpen(false)}
      />
      <ul id={listId} role="listbox" aria-label={`Resultados de ${target.etiqueta}`} hidden={!open}>
        {choices.map((c, i) => (
          <li key={c.id} id={`${listId}-${i}`} role="option" aria-selected={i === active ? 'true' : 'false'} class={i === active ? 'active' : undefined}
            onMouseDown={(e) => e.preventDefault()} onClick={() => pick(c)}>{c.label}</li>
        ))}
        {choices.length === 0 && <li role="option" aria-selected="false" aria-disabled="true">Sin resultados</li>}
      </ul>
      <span class="visually-hidden" role="status">{open && searched ? `${choices.length} resultados` : ''}</span>
    </div>
  )
}
