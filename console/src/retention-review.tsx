/**
 * The retention review on the data-protection screen (docs/user-guide.md
 * "Personal data", "Console"): the last run and `Revisar ahora`, the
 * records past their conservacion (GET /proteccion-datos/revision), by
 * module and page, each with its decisions (retention-decision.tsx); what
 * each action did is announced in a status line and the list read again.
 */
import { useEffect, useState } from 'preact/hooks'
import { request } from './api.js'
import { fieldOf, valueLabel, type ModuleInfo } from './modules.js'
import { Pager, type PageOf } from './pager.js'
import { moduleLabel, moduleNamed, RecordIdLink } from './record-id-link.js'
import { refusalText } from './refusal.js'
import { DecisionDialog, type DecisionKind, type DecisionTarget } from './retention-decision.js'
import { dateText, dateTimeText, numberText } from './spanish.js'

interface Due { modulo: string, id: string, desde: string, vence: string, estado: string | null, eliminado: boolean, bloqueado: string | null }
interface Review extends PageOf { records: Due[], ultima_revision: { dia: string, fecha: string, total: number } | null }
const LIMIT = 20
const LABELS: Record<string, string> = { modulo: 'Módulo' }

const pending = (n: number): string => n === 1 ? 'un registro pendiente de revisar' : `${numberText(n)} registros pendientes de revisar`

/** `onDecided`: a decision was taken (the decisions list reads itself again). */
export function RetentionReview ({ modules, onDecided }: { modules: ModuleInfo[], onDecided: () => void }) {
  const [modulo, setModulo] = useState('')
  const [offset, setOffset] = useState(0)
  const [version, setVersion] = useState(0)
  const [data, setData] = useState<Review>()
  const [error, setError] = useState<string>()
  const [done, setDone] = useState('')
  const [busy, setBusy] = useState(false)
  const [chosen, setChosen] = useState<DecisionTarget>()

  useEffect(() => {
    const query = new URLSearchParams({ limit: String(LIMIT), offset: String(offset), ...(modulo !== '' && { modulo }) })
    let live = true
    request<{ data: Review }>('GET', `/proteccion-datos/revision?${query.toString()}`).then((res) => {
      if (!live) return
      // The last row of the last page left the list: the page before it.
      if (res.data.records.length === 0 && offset > 0) { setOffset(Math.max(0, offset - LIMIT)); return }
      setData(res.data)
      setError(undefined)
    }, (err: unknown) => { if (live) { setData(undefined); setError(refusalText(err, (c) => LABELS[c] ?? c)) } })
    return () => { live = false }
  }, [modulo, offset, version])

  const reviewNow = async (): Promise<void> => {
    setBusy(true)
    setDone('')
    try {
      const run = (await request<{ data: { dia: string, total: number } }>('POST', '/proteccion-datos/revision')).data
      setDone(`Revisión hecha (${dateText(run.dia)}): ${pending(run.total)}`)
      setError(undefined)
      setVersion((v) => v + 1)
    } catch (err) {
      setError(refusalText(err))
    } finally {
      setBusy(false)
    }
  }
  const decided = (message: string): void => {
    setChosen(undefined)
    setDone(message)
    setVersion((v) => v + 1)
    onDecided()
  }
  const filter = (e: Event): void => {
    e.preventDefault()
    setModulo(String(new FormData(e.currentTarget as HTMLFormElement).get('modulo') ?? ''))
    setOffset(0)
  }
  const choose = (row: Due, action: DecisionKind): void => {
    setDone('')
    setChosen({ action, id: row.id, path: moduleNamed(modules, row.modulo)?.ruta ?? row.modulo })
  }

  const last = data?.ultima_revision
  return (
    <section aria-labelledby="revision">
      <h2 id="revision">Revisión de conservación</h2>
      <p>
        {data === undefined ? '' : last == null ? 'Todavía no se ha hecho ninguna revisión.' : `Última revisión: la del ${dateText(last.dia)}, hecha el ${dateTimeText(last.fecha)}, que encontró ${pending(last.total)}.`}
        {' '}Cada día se revisan solos los registros cuyo plazo de conservación venció.
      </p>
      <p class="actions"><button type="button" disabled={busy} onClick={() => { void reviewNow() }}>Revisar ahora</button></p>
      <p class="ok" role="status">{done}</p>
      <form class="search" onSubmit={filter}>
        <label for="revision-modulo">Módulo</label>
        <select id="revision-modulo" name="modulo" defaultValue={modulo}>
          <option value="">Todos</option>
          {modules.map((m) => <option key={m.nombre} value={m.nombre}>{m.etiqueta}</option>)}
        </select>
        <button type="submit">Filtrar</button>
      </form>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {data !== undefined && data.total === 0 && <p>Ningún registro pendiente de revisar{modulo === '' ? '' : ` en ${moduleLabel(modules, modulo)}`}.</p>}
      {data !== undefined && data.total > 0 && (
        <>
          <div class="table-wrap">
            <table class="review">
              <caption>Registros con la conservación vencida, el que venció antes primero ({pending(data.total)})</caption>
              <thead>
                <tr><th scope="col">Módulo</th><th scope="col">Referencia</th><th scope="col">Desde</th><th scope="col">Vence</th><th scope="col">Estado</th><th scope="col">Eliminado</th><th scope="col">Bloqueado</th><th scope="col">Acciones</th></tr>
              </thead>
              <tbody>
                {data.records.map((r) => <DueRow key={`${r.modulo}/${r.id}`} row={r} modules={modules} onChoose={(action) => choose(r, action)} />)}
              </tbody>
            </table>
          </div>
          <Pager label="Páginas de la revisión" page={data} onOffset={setOffset} />
        </>
      )}
      {chosen !== undefined && <DecisionDialog key={`${chosen.action}/${chosen.id}`} target={chosen} onCancel={() => setChosen(undefined)} onDone={decided} />}
    </section>
  )
}

function DueRow ({ row, modules, onChoose }: { row: Due, modules: ModuleInfo[], onChoose: (action: DecisionKind) => void }) {
  const mod = moduleNamed(modules, row.modulo)
  const state = row.estado === null ? '—' : valueLabel(mod?.campo_estado === undefined ? undefined : fieldOf(mod, mod.campo_estado), row.estado)
  const named = <span class="visually-hidden"> {row.id}</span>
  return (
    <tr>
      <td>{moduleLabel(modules, row.modulo)}</td>
      <th scope="row"><RecordIdLink modules={modules} modulo={row.modulo} id={row.id} deleted={row.eliminado} /></th>
      <td>{dateText(row.desde)}</td>
      <td>{dateText(row.vence)}</td>
      <td>{state}</td>
      <td>{row.eliminado ? <span class="deleted">Eliminado</span> : 'No'}</td>
      <td>{row.bloqueado === null ? 'No' : <span class="blocked">Desde {dateTimeText(row.bloqueado)}</span>}</td>
      <td>
        <span class="row-actions">
          <button type="button" class="small" onClick={() => onChoose('prolongar')}>Prolongar{named}</button>
          {row.bloqueado === null
            ? <button type="button" class="small secondary" onClick={() => onChoose('bloquear')}>Bloquear{named}</button>
            : <button type="button" class="small secondary" onClick={() => onChoose('desbloquear')}>Desbloquear{named}</button>}
          <button type="button" class="small danger" onClick={() => onChoose('suprimir')}>Suprimir{named}</button>
        </span>
      </td>
    </tr>
  )
}
