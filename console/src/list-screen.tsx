/**
 * A module's list (docs/user-guide.md "Console"): `_id` linking to the record, the module's
 * columns (GET /me/modulos `columnas`, asked for with `campos`), the total,
 * pages of 50, sort by a column header, `Buscar` (full-text `q`). Its state
 * is in the address, so Back returns to the same page.
 */
import { useEffect, useLayoutEffect, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { ExportButton } from './export-button.js'
import { labelIn, type ModuleInfo } from './modules.js'
import { Restricted, Shown, SystemValue } from './shown.js'
import { href } from './route.js'
import { filterProblems, filterQuery } from './filter-query.js'
import { Filters } from './filters.js'
import { NEW_PATH } from './form-screen.js'
import { IMPORT_PATH } from './import-screen.js'
import { listParams, REPORT_PATH } from './report-screen.js'
import { markListData, measureListRender } from './perf.js'
import { numberText } from './spanish.js'

export const PAGE = 50
const SORTABLE_SYSTEM = new Set(['_id'])

interface Page { records: Array<Record<string, unknown>>, total: number }

export function ListScreen ({ mod, modules, params }: { mod: ModuleInfo, modules: ModuleInfo[], params: URLSearchParams }) {
  const q = params.get('q') ?? ''
  const sort = params.get('sort') ?? ''
  const page = Math.max(1, Number.parseInt(params.get('pagina') ?? '1', 10) || 1)
  // Deleted records: only for those who may delete (and restore) them, as the API allows.
  const deleted = mod.acciones.eliminar !== undefined && params.get('eliminados') === 'si'
  const [data, setData] = useState<Page>()
  const [error, setError] = useState<string>()
  // The rows shown until the next page arrives are the previous page's: said so to assistive technology.
  const [loading, setLoading] = useState(true)
  const [problems, setProblems] = useState(new Map<string, string>())
  const columns = mod.columnas
  const fields = new Map(mod.campos.map((f) => [f.nombre, f]))
  // Numbers aligned right, so their digits line up.
  const numeric = new Set(mod.campos.filter((f) => f.tipo === 'integer' || f.tipo === 'decimal').map((f) => f.nombre))
  const filters = filterQuery(mod, params)
  // What the list shows, and what an export takes: the filters, the search, the order.
  const selection: Array<[string, string]> = [...filters, ...(q === '' ? [] : [['q', q] as [string, string]]), ...(sort === '' ? [] : [['sort', sort] as [string, string]])]
  const filterKey = new URLSearchParams(selection).toString()

  useEffect(() => {
    const query = new URLSearchParams({ campos: [...columns, ...(deleted ? ['_deleted'] : [])].join(','), limit: String(PAGE), offset: String((page - 1) * PAGE) })
    if (deleted) query.set('incluir_eliminados', 'true')
    for (const [name, value] of selection) query.append(name, value)
    setError(undefined)
    setLoading(true)
    let live = true
    request<{ data: Page }>('GET', `/${mod.ruta}?${query.toString()}`).then(
      (res) => { if (live) { markListData(); setData(res.data) } },
      (err: unknown) => { if (live) setError(err instanceof ApiError ? err.message : 'Error inesperado') },
    ).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [mod.ruta, page, deleted, filterKey])

  // The benchmark's measure: from the data's arrival to the frame that paints it (console/src/perf.ts).
  useLayoutEffect(() => { if (data !== undefined) measureListRender() }, [data])

  const go = (next: Record<string, string | undefined>): void => {
    const kept = Object.fromEntries([...params].filter(([k]) => k !== 'pagina'))
    location.hash = href([mod.ruta], { ...kept, eliminados: deleted ? 'si' : undefined, ...next })
  }
  const search = (e: Event): void => {
    e.preventDefault()
    // Every input of the form is a parameter of the address: `q` and the filters.
    const form = Object.fromEntries([...new FormData(e.currentTarget as HTMLFormElement)].map(([k, v]) => [k, String(v).trim()]))
    // A date or number that does not read is said beside it, not dropped from the search unseen.
    const found = filterProblems(mod, form)
    setProblems(found)
    const first = [...found.keys()][0]
    if (first !== undefined) {
      ;(e.currentTarget as HTMLFormElement).querySelector<HTMLInputElement>(`[name="${CSS.escape(first)}"]`)?.focus()
      return
    }
    go({ ...form, pagina: undefined })
  }
  const pages = data === undefined ? 1 : Math.max(1, Math.ceil(data.total / PAGE))

  return (
    <>
      <h1>{mod.etiqueta}</h1>
      <p class="actions">
        {mod.acciones.crear !== undefined && <a class="button" href={href([mod.ruta, NEW_PATH])}>Nuevo</a>}
        <a class="button secondary" href={href([mod.ruta, REPORT_PATH], listParams(params))}>Informes</a>
        {mod.acciones.importar !== undefined && <a class="button secondary" href={href([mod.ruta, IMPORT_PATH])}>Importar</a>}
      </p>
      <form class="search" role="search" onSubmit={search}>
        <label for="buscar">Buscar</label>
        <input id="buscar" name="q" type="search" defaultValue={q} />
        <Filters key={params.toString()} mod={mod} modules={modules} params={params} problems={problems} />
        {problems.size > 0 && <p class="error" role="alert">Revise {problems.size === 1 ? 'el filtro marcado' : `los ${problems.size} filtros marcados`}</p>}
        <button type="submit">Buscar</button>
        {mod.acciones.eliminar !== undefined && (
          <label class="check"><input type="checkbox" checked={deleted} onChange={(e) => go({ eliminados: (e.currentTarget as HTMLInputElement).checked ? 'si' : undefined, pagina: undefined })} /> Incluir eliminados</label>
        )}
      </form>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {data !== undefined && (
        <>
          <p class="total" role="status">{data.total === 1 ? '1 registro' : `${numberText(data.total)} registros`}</p>
          {mod.acciones.exportar !== undefined && <ExportButton mod={mod} selection={selection} />}
          <div class="table-wrap" aria-busy={loading ? 'true' : undefined}>
            <table>
              <caption class="visually-hidden">{mod.etiqueta}: página {page} de {pages}</caption>
              <thead>
                <tr>{['_id', ...columns].map((name) => <Header key={name} name={name} label={labelIn(mod, name)} sortable={SORTABLE_SYSTEM.has(name) || mod.campos.some((f) => f.nombre === name && f.filtrable)} sort={sort} onSort={(s) => go({ sort: s, pagina: undefined })} />)}</tr>
              </thead>
              <tbody>
                {data.records.map((r) => (
                  <tr key={String(r._id)}>
                    {/* A deleted record answers 404 by id: listed, not linked; `Restaurar` brings it back and opens it. */}
                    <th scope="row">{r._deleted != null ? <>{String(r._id)} <span class="deleted">Eliminado</span> <RestoreButton mod={mod} id={String(r._id)} /></> : <a href={href([mod.ruta, String(r._id)])}>{String(r._id)}</a>}</th>
                    {columns.map((c) => <td key={c} class={numeric.has(c) ? 'number' : undefined}>{Array.isArray(r._restringidos) && r._restringidos.includes(c) ? <Restricted /> : c.startsWith('_') ? <SystemValue name={c} value={r[c]} /> : <Shown field={fields.get(c)} value={r[c]} />}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Páginas">
            <button type="button" disabled={page <= 1} onClick={() => go({ pagina: page > 2 ? String(page - 1) : undefined })}>Anterior</button>
            <span>Página {numberText(page)} de {numberText(pages)}</span>
            <button type="button" disabled={page >= pages} onClick={() => go({ pagina: String(page + 1) })}>Siguiente</button>
          </nav>
        </>
      )}
    </>
  )
}

function Header ({ name, label, sortable, sort, onSort }: { name: string, label: string, sortable: boolean, sort: string, onSort: (sort: string) => void }) {
  if (!sortable) return <th scope="col">{label}</th>
  const state = sort === name ? 'ascending' : sort === `-${name}` ? 'descending' : undefined
  return (
    <th scope="col" aria-sort={state ?? 'none'}>
      <button type="button" class="sort" onClick={() => onSort(state === 'ascending' ? `-${name}` : name)}>
        {label}<span aria-hidden="true">{state === 'ascending' ? ' ▲' : state === 'descending' ? ' ▼' : ''}</span>
      </button>
    </th>
  )
}

function RestoreButton ({ mod, id }: { mod: ModuleInfo, id: string }) {
  const [error, setError] = useState<string>()
  const restore = (): void => {
    request('POST', `/${mod.ruta}/${encodeURIComponent(id)}/restaurar`).then(
      () => { location.hash = href([mod.ruta, id]) },
      (err: unknown) => setError(err instanceof ApiError ? err.message : 'Error inesperado'),
    )
  }
  return (
    <>
      <button type="button" class="secondary small" aria-label={`Restaurar ${id}`} onClick={restore}>Restaurar</button>
      {error !== undefined && <span class="error" role="alert">{error}</span>}
    </>
  )
}
