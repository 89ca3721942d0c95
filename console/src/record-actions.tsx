/**
 * A record's actions (docs/user-guide.md "Console"): `Editar`; the state moves
 * the module's machine allows from the current state, one button per
 * target state by its label (`Pasar a «En investigación»`), for those who may `editar`;
 * `Eliminar` (after a confirming dialog) and `Restaurar` for those who may
 * `eliminar`. Each write names the version the screen shows (`_version`,
 * `If-Match`), so a record changed meanwhile is reloaded, not overwritten.
 * `Imprimir` downloads the record's printed copy, a PDF with a verifiable
 * code (docs/user-guide.md "Printed records (documento)"), with the token in the header.
 */
import { useRef, useState } from 'preact/hooks'
import { ApiError, download, request } from './api.js'
import { EDIT_PATH } from './form-screen.js'
import { fieldOf, labelIn, valueLabel, type ModuleInfo } from './modules.js'
import { href } from './route.js'

type Row = Record<string, unknown>

export interface ActionsProps {
  mod: ModuleInfo
  record: Row
  /** The record as written (or undefined to reload it) and what to announce. */
  onDone: (record: Row | undefined, message: string) => void
}

export function RecordActions ({ mod, record, onDone }: ActionsProps) {
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const [printed, setPrinted] = useState<string>()
  const dialog = useRef<HTMLDialogElement>(null)
  const id = String(record._id)
  const base = `/${mod.ruta}/${encodeURIComponent(id)}`
  const deleted = record._deleted != null
  const state = mod.campo_estado === undefined ? undefined : record[mod.campo_estado]
  const moves = mod.acciones.editar === undefined || deleted ? [] : mod.transiciones.filter((t) => t.desde === state)
  // A state by its label (`En investigación`), else its value.
  const stateLabel = (v: string): string => valueLabel(mod.campo_estado === undefined ? undefined : fieldOf(mod, mod.campo_estado), v)

  const run = async (write: () => Promise<Row | undefined>, message: string): Promise<void> => {
    setBusy(true)
    setError(undefined)
    try {
      onDone(await write(), message)
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.codigo === 'CONFLICTO_VERSION') {
        onDone(undefined, 'El registro había cambiado: se muestra su versión actual; repita la acción si sigue siendo necesaria')
      } else {
        setError(err instanceof ApiError ? [err.message, ...(err.detalles ?? []).map((d) => `${labelIn(mod, d.campo)}: ${d.mensaje}`)].join('. ') : 'Error inesperado')
      }
    } finally {
      setBusy(false)
    }
  }
  const move = (to: string): Promise<void> => run(async () => (await request<{ data: Row }>('PUT', base, { [mod.campo_estado!]: to, _version: record._version })).data, `Estado cambiado a «${stateLabel(to)}»`)
  const remove = (): Promise<void> => {
    dialog.current?.close()
    return run(async () => {
      await request('DELETE', base, undefined, { 'If-Match': `"${String(record._version)}"` })
      return { ...record, _deleted: true, _version: Number(record._version) + 1 }
    }, 'Registro eliminado')
  }
  const print = async (): Promise<void> => {
    setBusy(true)
    setError(undefined)
    setPrinted(undefined)
    try {
      setPrinted(`Copia impresa descargada: ${await download(`${base}/documento`)}`)
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Error inesperado')
    } finally {
      setBusy(false)
    }
  }
  const restore = (): Promise<void> => run(async () => (await request<{ data: Row }>('POST', `${base}/restaurar`)).data, 'Registro restaurado')

  return (
    <section class="actions" aria-label="Acciones">
      {mod.acciones.editar !== undefined && !deleted && <a class="button" href={href([mod.ruta, id, EDIT_PATH])}>Editar</a>}
      {!deleted && <button type="button" class="secondary" disabled={busy} onClick={() => { void print() }}>Imprimir</button>}
      {moves.map((t) => {
        const missing = t.requiere.filter((f) => record[f] === null || record[f] === undefined || record[f] === '')
        return (
          <span key={t.a} class="move">
            <button type="button" disabled={busy} aria-describedby={missing.length > 0 ? `requiere-${t.a}` : undefined} onClick={() => { void move(t.a) }}>Pasar a «{stateLabel(t.a)}»</button>
            {missing.length > 0 && <span id={`requiere-${t.a}`} class="hint">Requiere: {missing.map((f) => labelIn(mod, f)).join(', ')}</span>}
          </span>
        )
      })}
      {mod.acciones.eliminar !== undefined && !deleted && <button type="button" class="danger" disabled={busy} onClick={() => dialog.current?.showModal()}>Eliminar</button>}
      {mod.acciones.eliminar !== undefined && deleted && <button type="button" disabled={busy} onClick={() => { void restore() }}>Restaurar</button>}
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {printed !== undefined && <p class="notice" role="status">{printed}</p>}
      <dialog ref={dialog} aria-labelledby="eliminar-titulo" aria-describedby="eliminar-texto">
        <h2 id="eliminar-titulo">Eliminar {id}</h2>
        <p id="eliminar-texto">El registro dejará de aparecer en las listas. Quien pueda eliminar podrá restaurarlo; su historial se conserva.</p>
        <p class="dialog-buttons">
          <button type="button" class="danger" onClick={() => { void remove() }}>Eliminar</button>
          <button type="button" class="secondary" autofocus onClick={() => dialog.current?.close()}>Cancelar</button>
        </p>
      </dialog>
    </section>
  )
}
