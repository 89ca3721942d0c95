/**
 * An import's problems row by row (docs/user-guide.md "Import
 * (importar)"): the file's row (in a CSV the header is row 1, as a
 * spreadsheet shows it), the field by its label (empty: the whole row) and
 * the service's message.
 */
import type { ModuleInfo } from './modules.js'
import { fieldLabel } from './report-data.js'

export interface Problem { fila: number | undefined, campo: string, mensaje: string }

/** A problem's field by its label: `testigos[0].nombre` by its array's and sub-field's. */
function fieldName (mod: ModuleInfo, campo: string): string {
  if (campo === '') return '(toda la fila)'
  const [top, ...rest] = campo.split('.')
  const name = top!.replace(/\[\d+\]$/, '')
  const f = mod.campos.find((c) => c.nombre === name)
  if (f === undefined) return campo
  const sub = rest.length === 0 ? undefined : f.elementos?.find((e) => e.nombre === rest.join('.'))
  const label = fieldLabel(f) + top!.slice(name.length).replace(/\[(\d+)\]/, (_, i: string) => ` ${Number(i) + 1}`)
  return sub === undefined ? (rest.length === 0 ? label : `${label}: ${rest.join('.')}`) : `${label}: ${fieldLabel(sub)}`
}

/** What the import leaves out without refusing the file (a CSV's files: only their data travel), by field. */
export function ImportNotes ({ mod, notes }: { mod: ModuleInfo, notes: Problem[] | undefined }) {
  if (notes === undefined || notes.length === 0) return null
  return (
    <ul class="notes" aria-label="Avisos">
      {notes.map((n, i) => <li key={i}>Aviso ({fieldName(mod, n.campo)}): {n.mensaje}</li>)}
    </ul>
  )
}

export function ImportProblems ({ mod, problems, omitted }: { mod: ModuleInfo, problems: Problem[], omitted: number }) {
  return (
    <>
      <div class="table-wrap">
        <table class="problems">
          <caption>{problems.length === 1 ? '1 problema' : `${problems.length} problemas`}, por fila</caption>
          <thead><tr><th scope="col">Fila</th><th scope="col">Campo</th><th scope="col">Problema</th></tr></thead>
          <tbody>
            {problems.map((p, i) => (
              <tr key={i}>
                <th scope="row">{p.fila ?? '—'}</th>
                <td>{fieldName(mod, p.campo)}</td>
                <td>{p.mensaje}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {omitted > 0 && <p>Y {omitted === 1 ? 'otro problema que no se muestra' : `otros ${omitted} problemas que no se muestran`} (se muestran los 1000 primeros).</p>}
    </>
  )
}
