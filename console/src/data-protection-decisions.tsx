/**
 * The data-protection officer's decisions (docs/user-guide.md "Personal
 * data", "Console"): prolongations, blocks, unblocks and erasures, newest
 * first, each with its author, date and reason (GET
 * /proteccion-datos/decisiones), read again after each new one.
 */
import { useEffect, useState } from 'preact/hooks'
import { request } from './api.js'
import type { ModuleInfo } from './modules.js'
import { Pager, type PageOf } from './pager.js'
import { Person } from './people.js'
import { moduleLabel, RecordIdLink } from './record-id-link.js'
import { refusalText } from './refusal.js'
import { dateText, dateTimeText, numberText } from './spanish.js'

interface Decision { fecha: string, usuario: string, modulo: string, id: string, accion: string, motivo: string, hasta: string | null }
const LIMIT = 20
const ACTIONS: Record<string, string> = { prolongar: 'Prórroga', bloquear: 'Bloqueo', desbloquear: 'Desbloqueo', suprimir: 'Supresión de datos personales' }

/** `version`: changes when a decision was taken, so the list reads itself again. */
export function DataProtectionDecisions ({ modules, version }: { modules: ModuleInfo[], version: number }) {
  const [offset, setOffset] = useState(0)
  const [data, setData] = useState<PageOf & { records: Decision[] }>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    let live = true
    request<{ data: PageOf & { records: Decision[] } }>('GET', `/proteccion-datos/decisiones?limit=${LIMIT}&offset=${offset}`)
      .then((res) => { if (live) { setData(res.data); setError(undefined) } }, (err: unknown) => { if (live) setError(refusalText(err)) })
    return () => { live = false }
  }, [offset, version])

  return (
    <section aria-labelledby="decisiones">
      <h2 id="decisiones">Decisiones</h2>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {data !== undefined && data.total === 0 && <p>Todavía no se ha tomado ninguna decisión.</p>}
      {data !== undefined && data.total > 0 && (
        <>
          <div class="table-wrap">
            <table>
              <caption>Las decisiones, la más reciente primero ({data.total === 1 ? 'una' : numberText(data.total)} en total)</caption>
              <thead><tr><th scope="col">Fecha</th><th scope="col">Usuario</th><th scope="col">Módulo</th><th scope="col">Referencia</th><th scope="col">Acción</th><th scope="col">Motivo</th><th scope="col">Hasta</th></tr></thead>
              <tbody>
                {data.records.map((d, i) => (
                  <tr key={`${d.fecha}/${d.id}/${i}`}>
                    <td class="nowrap">{dateTimeText(d.fecha)}</td>
                    <td><Person id={d.usuario} /></td>
                    <td>{moduleLabel(modules, d.modulo)}</td>
                    <td class="nowrap"><RecordIdLink modules={modules} modulo={d.modulo} id={d.id} /></td>
                    <td>{ACTIONS[d.accion] ?? d.accion}</td>
                    <td class="wrap">{d.motivo}</td>
                    <td class="nowrap">{d.hasta === null ? '—' : dateText(d.hasta)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label="Páginas de las decisiones" page={data} onOffset={setOffset} />
        </>
      )}
    </section>
  )
}
