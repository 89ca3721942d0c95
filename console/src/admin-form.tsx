/**
 * What the administration screens share: a labelled input with the API's
 * `detalles` for it beside it (docs/user-guide.md "Console"), and the outcome of an
 * action said to assistive technology (a status, or an alert when refused).
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError, request, type Detail } from './api.js'

export interface Outcome { ok: boolean, text: string, detalles?: Detail[] }

/** Runs `action`; its answer's message or the API's refusal as the outcome. */
export function useOutcome (): [Outcome | undefined, (action: () => Promise<string>) => Promise<boolean>] {
  const [outcome, setOutcome] = useState<Outcome>()
  const run = async (action: () => Promise<string>): Promise<boolean> => {
    setOutcome(undefined)
    try {
      setOutcome({ ok: true, text: await action() })
      return true
    } catch (err) {
      setOutcome(err instanceof ApiError ? { ok: false, text: err.message, detalles: err.detalles ?? [] } : { ok: false, text: 'Error inesperado' })
      return false
    }
  }
  return [outcome, run]
}

export function OutcomeLine ({ outcome }: { outcome: Outcome | undefined }) {
  if (outcome === undefined) return null
  return <p class={outcome.ok ? 'ok' : 'error'} role={outcome.ok ? 'status' : 'alert'}>{outcome.text}</p>
}

interface InputProps { id: string, name: string, label: string, outcome?: Outcome | undefined, type?: 'text' | 'password' | 'email' | 'url' | 'number', required?: boolean, autocomplete?: string, hint?: string, defaultValue?: string, children?: ComponentChildren }

/** An input (or the `children` control; `type` cast: Preact's types tie each input type to its own attributes) with its label, and the API's message for the field, tied by aria-describedby. */
export function Input ({ id, name, label, outcome, type = 'text', required = false, autocomplete, hint, defaultValue, children }: InputProps) {
  const message = outcome?.detalles?.find((d) => d.campo === name)?.mensaje
  const described = [hint === undefined ? '' : `${id}-ayuda`, message === undefined ? '' : `${id}-error`].filter((s) => s !== '').join(' ') || undefined
  return (
    <div>
      <label for={id}>{label}</label>
      {children ?? <input id={id} name={name} type={type as 'text'} required={required} autocomplete={autocomplete} defaultValue={defaultValue} aria-invalid={message === undefined ? undefined : 'true'} aria-describedby={described} />}
      {hint !== undefined && <span id={`${id}-ayuda`} class="hint">{hint}</span>}
      {message !== undefined && <span id={`${id}-error`} class="error">{message}</span>}
    </div>
  )
}

/** The values of a form's inputs, trimmed; empty ones left out. */
export function formValues (form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, String(v).trim()]).filter(([, v]) => v !== ''))
}

/** The records of a list request (every page the screen needs in one: `limit=1000`), its error, and a reload. */
export function useRecords<T> (path: string): [T[] | undefined, string | undefined, () => void] {
  const [rows, setRows] = useState<T[]>()
  const [error, setError] = useState<string>()
  const load = (): void => {
    request<{ data: { records: T[] } }>('GET', path).then(
      (res) => { setRows(res.data.records); setError(undefined) },
      (err: unknown) => setError(err instanceof ApiError ? err.message : 'Error inesperado'),
    )
  }
  useEffect(load, [path])
  return [rows, error, load]
}
