/**
 * The 092 room board (docs/user-guide.md "Console"): the open calls of `sala092` (pendiente,
 * en curso), newest first, kept up to date from the live stream (S18,
 * console/src/event-stream.ts) without a reload. Urgent calls are
 * highlighted and marked in words, and announced at once to screen
 * readers (an assertive live region); other news politely.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { openStream, type StreamState } from './event-stream.js'
import { fieldLabel, labelOf, type FieldInfo, type ModuleInfo } from './modules.js'
import { Restricted, Shown, valueText, EMPTY } from './shown.js'
import { href } from './route.js'

export const BOARD_MODULE = 'sala092'
const OPEN = ['pendiente', 'en_curso']
const COLUMNS = ['fecha_hora_entrada', 'tipo_incidencia', 'categoria', 'descripcion', 'ubicacion', 'patrulla_asignada', 'estado']
const MAX_ROWS = 200
const STATES: Record<StreamState, string> = { conectando: 'Conectando…', conectado: 'En directo', reconectando: 'Conexión perdida: reconectando…', terminado: 'Sin conexión' }

type Call = Record<string, unknown>
interface FeedEvent { tipo: string, registro_id: string, registro: Call }

const isOpen = (c: Call): boolean => c.estado === undefined || OPEN.includes(String(c.estado))
const isUrgent = (c: Call): boolean => c.tipo_incidencia === 'urgente'
/** What is announced of a call: its category, description and place, as shown. */
const say = (c: Call, fields: Map<string, FieldInfo>): string => [valueText(fields.get('categoria'), c.categoria), valueText(fields.get('descripcion'), c.descripcion), c.ubicacion == null ? '' : `en ${String(c.ubicacion)}`].filter((s) => s !== EMPTY && s !== '').join(', ')

export function BoardScreen ({ mod }: { mod: ModuleInfo }) {
  const [calls, setCalls] = useState<Call[]>()
  const [error, setError] = useState<string>()
  const [state, setState] = useState<{ s: StreamState, detail?: string }>({ s: 'conectando' })
  const [urgent, setUrgent] = useState('')
  const [news, setNews] = useState('')
  const [fresh, setFresh] = useState<Set<string>>(new Set())
  const reloads = useRef(0)
  const columns = COLUMNS.filter((c) => mod.campos.some((f) => f.nombre === c))
  const fields = new Map(mod.campos.map((f) => [f.nombre, f]))

  const load = (): void => {
    const query = new URLSearchParams({ campos: columns.join(','), limit: '100', sort: '-_id' })
    if (mod.campos.some((f) => f.nombre === 'estado')) query.set('estado[in]', OPEN.join(','))
    request<{ data: { records: Call[] } }>('GET', `/${mod.ruta}?${query.toString()}`).then(
      // Calls the stream brought before the list arrived are newer: kept first.
      (res) => setCalls((old) => [...(old ?? []).filter((c) => !res.data.records.some((r) => r._id === c._id)), ...res.data.records]),
      (err: unknown) => setError(err instanceof ApiError ? err.message : 'Error inesperado'),
    )
  }

  const apply = (e: FeedEvent): void => {
    const record = { ...e.registro, _id: e.registro_id }
    const created = e.tipo.endsWith('.creado')
    const gone = e.tipo.endsWith('.eliminado') || !isOpen(record)
    setCalls((old) => {
      const rest = (old ?? []).filter((c) => c._id !== e.registro_id)
      return gone ? rest : [record, ...rest].slice(0, MAX_ROWS)
    })
    if (gone) {
      setNews(`Llamada ${e.registro_id} cerrada o eliminada`)
      return
    }
    setFresh((old) => new Set(old).add(e.registro_id))
    if (isUrgent(record)) setUrgent(`Llamada urgente ${e.registro_id}${created ? '' : ' actualizada'}: ${say(record, fields)}`)
    else setNews(`${created ? 'Nueva llamada' : 'Llamada actualizada'} ${e.registro_id}: ${say(record, fields)}`)
  }

  useEffect(() => {
    load()
    const stop = openStream(`/eventos?modulos=${encodeURIComponent(mod.nombre)}`, (m) => {
      if (m.event === 'recargar') {
        reloads.current++
        load()
        return
      }
      if (!m.event.startsWith(`${mod.nombre}.`)) return
      apply(JSON.parse(m.data) as FeedEvent)
    }, (s, detail) => setState({ s, detail }))
    return stop
  }, [mod.ruta])

  return (
    <>
      <h1>Tablero de la sala 092</h1>
      <p class={`live-state live-${state.s}`} role="status">{STATES[state.s]}{state.detail === undefined ? '' : `: ${state.detail}`}</p>
      {/* Always in the page, so assistive technology hears what is written into them. */}
      <p class="urgent-news" role="alert">{urgent}</p>
      <p class="visually-hidden" aria-live="polite">{news}</p>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {calls === undefined
        ? <p aria-busy="true">Cargando…</p>
        : (
          <div class="table-wrap">
            <table class="board">
              <caption>Llamadas abiertas ({calls.length}), las más recientes primero</caption>
              <thead><tr><th scope="col">Referencia</th>{columns.map((c) => <th key={c} scope="col">{fields.has(c) ? fieldLabel(fields.get(c)!) : labelOf(c)}</th>)}</tr></thead>
              <tbody>
                {calls.map((c) => (
                  <tr key={String(c._id)} class={`${isUrgent(c) ? 'urgent' : ''} ${fresh.has(String(c._id)) ? 'fresh' : ''}`.trim() || undefined}>
                    <th scope="row"><a href={href([mod.ruta, String(c._id)])}>{String(c._id)}</a>{isUrgent(c) && <> <span class="urgent-mark">Urgente</span></>}</th>
                    {columns.map((k) => <td key={k}>{Array.isArray(c._restringidos) && c._restringidos.includes(k) ? <Restricted /> : <Shown field={fields.get(k)} value={c[k]} />}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          )}
    </>
  )
}
