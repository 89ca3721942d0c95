/**
 * A person's data on the data-protection screen (docs/user-guide.md
 * "Personal data", "Console"): every record holding a DNI or NIE (GET
 * /proteccion-datos/interesado), where it holds it, and who read it; the
 * same search as a PDF to hand over (`Descargar PDF`, fetched with the
 * token like a record's printed copy). The DNI stays out of the address:
 * it is kept in this screen's memory only.
 */
import { useState } from 'preact/hooks'
import { download, request } from './api.js'
import { labelIn, type ModuleInfo } from './modules.js'
import { Person } from './people.js'
import { readKind } from './read-kinds.js'
import { moduleLabel, moduleNamed, RecordIdLink } from './record-id-link.js'
import { fieldProblem, refusalText } from './refusal.js'
import { dateTimeText, numberText } from './spanish.js'

interface Read { tipo: string, usuario: string, fecha: string }
interface Holding { modulo: string, id: string, campos: string[], eliminado: boolean, lecturas: { total: number, records: Read[] } }
interface Answer { registros: Holding[], total: number, no_buscables: string[] }
/** The latest reads shown per record; the PDF and the record's Accesos have more. */
const LATEST = 3
const LABELS: Record<string, string> = { dni: 'DNI o NIE' }

export function InterestedParty ({ modules }: { modules: ModuleInfo[] }) {
  const [answer, setAnswer] = useState<{ dni: string, data: Answer }>()
  const [error, setError] = useState<string>()
  const [problem, setProblem] = useState<string>()
  const [done, setDone] = useState('')
  const [busy, setBusy] = useState(false)

  const search = async (e: Event): Promise<void> => {
    e.preventDefault()
    const dni = String(new FormData(e.currentTarget as HTMLFormElement).get('dni') ?? '').trim()
    setBusy(true)
    setDone('')
    try {
      const res = await request<{ data: Answer }>('GET', `/proteccion-datos/interesado?dni=${encodeURIComponent(dni)}`)
      setAnswer({ dni, data: res.data })
      setError(undefined)
      setProblem(undefined)
      setDone(res.data.total === 0 ? 'Ningún registro guarda este DNI' : res.data.total === 1 ? 'Un registro guarda este DNI' : `${numberText(res.data.total)} registros guardan este DNI`)
    } catch (err) {
      setAnswer(undefined)
      setProblem(fieldProblem(err, 'dni'))
      setError(refusalText(err, (c) => LABELS[c] ?? c))
    } finally {
      setBusy(false)
    }
  }
  const pdf = async (dni: string): Promise<void> => {
    setBusy(true)
    setDone('')
    try {
      setDone(`Informe descargado: ${await download(`/proteccion-datos/interesado/documento?dni=${encodeURIComponent(dni)}`)}`)
      setError(undefined)
    } catch (err) {
      setError(refusalText(err, (c) => LABELS[c] ?? c))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="interesado">
      <h2 id="interesado">Datos de un interesado</h2>
      <p>Todos los registros, también los eliminados, que guardan un DNI o NIE en un campo de DNI, y quién los leyó. Cada búsqueda queda en el registro de lecturas, sin el DNI.</p>
      <form class="search" role="search" aria-label="Interesado por DNI" onSubmit={(e) => { void search(e) }}>
        <label for="interesado-dni">DNI o NIE</label>
        <input id="interesado-dni" name="dni" autocomplete="off" spellcheck={false} aria-invalid={problem === undefined ? undefined : 'true'} aria-describedby={problem === undefined ? 'interesado-dni-ayuda' : 'interesado-dni-ayuda interesado-dni-error'} />
        <span id="interesado-dni-ayuda" class="hint">Con su letra de control, por ejemplo 12345678Z o X1234567L</span>
        {problem !== undefined && <span id="interesado-dni-error" class="error">{problem}</span>}
        <button type="submit" disabled={busy}>Buscar</button>
      </form>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      <p class="ok" role="status">{done}</p>
      {answer !== undefined && (
        <>
          <p class="actions"><button type="button" class="secondary" disabled={busy} onClick={() => { void pdf(answer.dni) }}>Descargar PDF</button></p>
          {answer.data.no_buscables.length > 0 && (
            <p class="notice">No se pueden buscar estos campos de DNI, cifrados sin índice: {answer.data.no_buscables.map((p) => unsearchable(modules, p)).join('; ')}. El administrador debe declararlos searchable.</p>
          )}
          {answer.data.total > 0 && <Holdings modules={modules} rows={answer.data.registros} />}
        </>
      )}
    </section>
  )
}

function Holdings ({ modules, rows }: { modules: ModuleInfo[], rows: Holding[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption>Registros que guardan el DNI buscado</caption>
        <thead><tr><th scope="col">Módulo</th><th scope="col">Referencia</th><th scope="col">Dónde guarda el DNI</th><th scope="col">Eliminado</th><th scope="col">Lecturas</th><th scope="col">Últimas lecturas</th></tr></thead>
        <tbody>
          {rows.map((r) => {
            const mod = moduleNamed(modules, r.modulo)
            return (
              <tr key={`${r.modulo}/${r.id}`}>
                <td>{moduleLabel(modules, r.modulo)}</td>
                <th scope="row"><RecordIdLink modules={modules} modulo={r.modulo} id={r.id} deleted={r.eliminado} /></th>
                <td>{r.campos.map((c) => mod === undefined ? c : labelIn(mod, c)).join(', ')}</td>
                <td>{r.eliminado ? <span class="deleted">Eliminado</span> : 'No'}</td>
                <td class="number">{numberText(r.lecturas.total)}</td>
                <td>
                  {r.lecturas.records.length === 0
                    ? 'Ninguna'
                    : (
                      <ul class="reads">
                        {r.lecturas.records.slice(0, LATEST).map((a, i) => <li key={i}>{dateTimeText(a.fecha)}, <Person id={a.usuario} />: {readKind(a.tipo)}</li>)}
                      </ul>
                      )}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

/** `denuncias.testigos.dni` → `Denuncias: Testigos: DNI`. */
function unsearchable (modules: ModuleInfo[], path: string): string {
  const [name = '', ...rest] = path.split('.')
  const mod = moduleNamed(modules, name)
  return `${moduleLabel(modules, name)}: ${mod === undefined ? rest.join('.') : labelIn(mod, rest.join('.'))}`
}
