/**
 * A record's accesses (docs/user-guide.md "Console", "Personal data"): who
 * read its encrypted data, printed it or downloaded its files, and when,
 * from the read log (GET /auditoria/lecturas by module and record), newest
 * first. Shown only to those who may read the log: superadmins and the
 * data-protection officer (`lecturas` in GET /me).
 */
import { useEffect, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { labelIn, type ModuleInfo } from './modules.js'
import { Person } from './people.js'
import { readKind } from './read-kinds.js'
import { dateTimeText } from './spanish.js'

interface Access { tipo: string, usuario: string, fecha: string, campos: string[], archivo?: string }
const SHOWN = 50

export function RecordAccesses ({ mod, id, version }: { mod: ModuleInfo, id: string, version: unknown }) {
  const [page, setPage] = useState<{ records: Access[], total: number }>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    // An answer to an earlier version's request may arrive last: only the newest request's is shown.
    let current = true
    const query = new URLSearchParams({ modulo: mod.nombre, registro: id, limit: String(SHOWN) })
    request<{ data: { records: Access[], total: number } }>('GET', `/auditoria/lecturas?${query.toString()}`)
      .then((res) => { if (current) { setPage(res.data); setError(undefined) } }, (err: unknown) => { if (current) setError(err instanceof ApiError ? err.message : 'Error inesperado') })
    return () => { current = false }
  }, [mod.nombre, id, version])
  return (
    <section aria-labelledby="accesos">
      <h2 id="accesos">Accesos</h2>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {page !== undefined && page.total === 0 && <p>Nadie ha leído datos cifrados de este registro, ni lo ha impreso ni ha descargado sus archivos.</p>}
      {page !== undefined && page.total > 0 && (
        <table>
          <caption>{page.total > SHOWN ? `Los ${SHOWN} más recientes de ${page.total}` : `${page.total === 1 ? 'Un acceso' : `${page.total} accesos`}, el más reciente primero`}</caption>
          <thead><tr><th scope="col">Fecha</th><th scope="col">Usuario</th><th scope="col">Acceso</th><th scope="col">Campos</th></tr></thead>
          <tbody>
            {page.records.map((a, i) => (
              <tr key={i}>
                <td>{dateTimeText(a.fecha, true)}</td>
                <td><Person id={a.usuario} /></td>
                <td>{readKind(a.tipo)}</td>
                <td>{a.campos.length > 0 ? a.campos.map((c) => labelIn(mod, c)).join(', ') : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
