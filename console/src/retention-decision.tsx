/**
 * One decision of the data-protection officer on a record, in a dialog
 * (docs/user-guide.md "Personal data", "Console"): `Prolongar` its
 * retention to a date, `Bloquear` or `Desbloquear` it, or `Suprimir` its
 * personal data for good, each with its reason (kept with its author and
 * date). Erasing cannot be undone, so the dialog says so and asks for an
 * explicit confirmation before anything is sent.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { request } from './api.js'
import { fieldProblem, refusalText } from './refusal.js'
import { dateText, parseDate } from './spanish.js'

export type DecisionKind = 'prolongar' | 'bloquear' | 'desbloquear' | 'suprimir'

export interface DecisionTarget { action: DecisionKind, path: string, id: string }

const TITLES: Record<DecisionKind, (id: string) => string> = {
  prolongar: (id) => `Prolongar la conservación de ${id}`,
  bloquear: (id) => `Bloquear ${id}`,
  desbloquear: (id) => `Desbloquear ${id}`,
  suprimir: (id) => `Suprimir los datos personales de ${id}`,
}
const EXPLAINED: Record<DecisionKind, string> = {
  prolongar: 'El registro sale de la revisión de conservación hasta la fecha que indique; entonces volverá a revisarse.',
  bloquear: 'Desde ahora solo lo leerán el delegado de protección de datos y el superadministrador, y cada lectura quedará registrada. Para los demás usuarios el registro no existirá: ni en las listas, ni en las exportaciones, ni en los informes.',
  desbloquear: 'El registro volverá a leerse como antes del bloqueo.',
  suprimir: 'Se borrarán para siempre los datos personales del registro (sus campos cifrados y los declarados personales) en su versión actual y en todas las versiones de su historial. No se podrán recuperar. Lo que no es personal (el tipo, el lugar, las fechas, el estado) se conserva.',
}
const SUBMIT: Record<DecisionKind, string> = { prolongar: 'Prolongar', bloquear: 'Bloquear', desbloquear: 'Desbloquear', suprimir: 'Suprimir definitivamente' }
const LABELS: Record<string, string> = { motivo: 'Motivo', hasta: 'Conservar hasta' }

interface Problems { motivo?: string, hasta?: string, confirmar?: string }

/** The dialog, open from the start; `onDone` with what to announce once the API took the decision. */
export function DecisionDialog ({ target, onCancel, onDone }: { target: DecisionTarget, onCancel: () => void, onDone: (message: string) => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [problems, setProblems] = useState<Problems>({})
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const { action, id } = target
  useEffect(() => { dialog.current?.showModal() }, [])

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const motivo = String(form.get('motivo') ?? '').trim()
    const found: Problems = {}
    if (motivo === '') found.motivo = 'Escriba el motivo de la decisión'
    const hasta = action === 'prolongar' ? parseDate(String(form.get('hasta') ?? '')) : undefined
    if (hasta !== undefined && 'problem' in hasta) found.hasta = `La fecha ${hasta.problem}`
    if (action === 'suprimir' && form.get('confirmar') === null) found.confirmar = 'Marque la casilla para confirmar que la supresión es definitiva'
    setProblems(found)
    setError(Object.keys(found).length > 0 ? 'Revise los campos marcados' : undefined)
    if (Object.keys(found).length > 0) return
    setBusy(true)
    try {
      const base = `/proteccion-datos/${encodeURIComponent(target.path)}/${encodeURIComponent(id)}/${action}`
      const day = hasta !== undefined && 'value' in hasta ? hasta.value : ''
      const res = await request<{ data: { supresion?: { campos: string[] } } }>('POST', base, action === 'prolongar' ? { motivo, hasta: day } : { motivo })
      dialog.current?.close()
      onDone(doneText(action, id, day, res.data.supresion?.campos.length ?? 0))
    } catch (err) {
      setProblems({ motivo: fieldProblem(err, 'motivo'), hasta: fieldProblem(err, 'hasta') })
      setError(refusalText(err, (c) => LABELS[c] ?? c))
    } finally {
      setBusy(false)
    }
  }

  const describedBy = (name: keyof Problems, hint?: string): string | undefined =>
    [hint ?? '', problems[name] === undefined ? '' : `decision-${name}-error`].filter((s) => s !== '').join(' ') || undefined
  return (
    <dialog ref={dialog} class="decision" aria-labelledby="decision-titulo" aria-describedby="decision-texto" onClose={onCancel}>
      <h2 id="decision-titulo">{TITLES[action](id)}</h2>
      <p id="decision-texto" class={action === 'suprimir' ? 'warning' : undefined}>{EXPLAINED[action]}</p>
      <form class="stacked" noValidate onSubmit={(e) => { void submit(e) }}>
        <div>
          <label for="decision-motivo">Motivo</label>
          <textarea id="decision-motivo" name="motivo" rows={3} maxLength={2000} aria-invalid={problems.motivo === undefined ? undefined : 'true'} aria-describedby={describedBy('motivo', 'decision-motivo-ayuda')} />
          <span id="decision-motivo-ayuda" class="hint">Queda en el registro de decisiones con su autor y su fecha</span>
          {problems.motivo !== undefined && <span id="decision-motivo-error" class="error">{problems.motivo}</span>}
        </div>
        {action === 'prolongar' && (
          <div>
            <label for="decision-hasta">Conservar hasta</label>
            <input id="decision-hasta" name="hasta" autocomplete="off" aria-invalid={problems.hasta === undefined ? undefined : 'true'} aria-describedby={describedBy('hasta', 'decision-hasta-ayuda')} />
            <span id="decision-hasta-ayuda" class="hint">Formato dd/mm/aaaa; una fecha posterior a hoy</span>
            {problems.hasta !== undefined && <span id="decision-hasta-error" class="error">{problems.hasta}</span>}
          </div>
        )}
        {action === 'suprimir' && (
          <div>
            <label class="check"><input type="checkbox" name="confirmar" aria-invalid={problems.confirmar === undefined ? undefined : 'true'} aria-describedby={describedBy('confirmar')} /> Entiendo que los datos personales de {id} se borrarán para siempre y no se podrán recuperar</label>
            {problems.confirmar !== undefined && <span id="decision-confirmar-error" class="error">{problems.confirmar}</span>}
          </div>
        )}
        {error !== undefined && <p class="error" role="alert">{error}</p>}
        <p class="dialog-buttons">
          <button type="submit" class={action === 'suprimir' || action === 'bloquear' ? 'danger' : undefined} disabled={busy}>{SUBMIT[action]}</button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>Cancelar</button>
        </p>
      </form>
    </dialog>
  )
}

function doneText (action: DecisionKind, id: string, hasta: string, erased: number): string {
  switch (action) {
    case 'prolongar': return `Conservación de ${id} prolongada hasta el ${dateText(hasta)}: sale de la revisión hasta entonces`
    case 'bloquear': return `Registro ${id} bloqueado: solo lo leen el delegado de protección de datos y el superadministrador`
    case 'desbloquear': return `Registro ${id} desbloqueado`
    case 'suprimir': return `Datos personales de ${id} suprimidos (${erased === 1 ? 'un campo' : `${erased} campos`})`
  }
}
