/**
 * A module's reports (docs/user-guide.md "Console", `Informes`): the
 * records a list with the same filters and search would show, counted
 * and summed by one or two keys (a date by day, week, month or year), from
 * GET /{module}/resumen. Its choices and filters are in the address, as a
 * list's: the list's `Informes` opens it with the list's filters, Back
 * returns to the same report. The result: console/src/report-view.tsx.
 */
import { useEffect, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { filterProblems, filterQuery } from './filter-query.js'
import { Filters } from './filters.js'
import type { ModuleInfo } from './modules.js'
import { fieldLabel, INTERVALS, keyFields, numberFields, reportSpec, summaryQuery, type ReportSpec } from './report-data.js'
import { ReportView, type Summary } from './report-view.js'
import { href } from './route.js'

export const REPORT_PATH = '_informes'
/** The report's own parameters; the rest of the address is the list's (filters, `q`). */
const OWN = new Set(['_por', '_y', '_intervalo', '_sumar', '_grafico'])

/** The list's part of the address: what a report keeps and gives back to the list. */
export function listParams (params: URLSearchParams): Record<string, string> {
  return Object.fromEntries([...params].filter(([k]) => !OWN.has(k) && k !== 'pagina' && k !== 'sort' && k !== 'eliminados'))
}

export function ReportScreen ({ mod, modules, params }: { mod: ModuleInfo, modules: ModuleInfo[], params: URLSearchParams }) {
  const spec = reportSpec(mod, params)
  const q = params.get('q') ?? ''
  const selection: Array<[string, string]> = [...filterQuery(mod, params), ...(q === '' ? [] : [['q', q] as [string, string]])]
  const query = summaryQuery(spec, selection).toString()
  // The answer with the choices it was asked with: shown as they were until the next one arrives (a new chart alone asks nothing).
  const [result, setResult] = useState<{ query: string, spec: ReportSpec, data: Summary }>()
  const [error, setError] = useState<string>()
  const [loading, setLoading] = useState(true)
  const [problems, setProblems] = useState(new Map<string, string>())

  useEffect(() => {
    setError(undefined)
    setLoading(true)
    let live = true
    request<{ data: Summary }>('GET', `/${mod.ruta}/resumen?${query}`).then(
      (res) => { if (live) setResult({ query, spec, data: res.data }) },
      (err: unknown) => { if (live) setError(err instanceof ApiError ? err.message : 'Error inesperado') },
    ).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [mod.ruta, query])

  const submit = (e: Event): void => {
    e.preventDefault()
    const formEl = e.currentTarget as HTMLFormElement
    // A date or number filter that does not read is said beside it, as on the list.
    const found = filterProblems(mod, Object.fromEntries([...new FormData(formEl)].map(([k, v]) => [k, String(v).trim()])))
    setProblems(found)
    const first = [...found.keys()][0]
    if (first !== undefined) {
      formEl.querySelector<HTMLInputElement>(`[name="${CSS.escape(first)}"]`)?.focus()
      return
    }
    const next: Record<string, string> = {}
    const sums: string[] = []
    for (const [k, v] of new FormData(formEl)) {
      const value = String(v).trim()
      if (k === '_sumar') sums.push(value)
      else if (value !== '') next[k] = value
    }
    if (sums.length > 0) next._sumar = sums.join(',')
    location.hash = href([mod.ruta, REPORT_PATH], next)
  }

  return (
    <>
      <h1>Informes: {mod.etiqueta}</h1>
      <p><a href={href([mod.ruta], listParams(params))}>Volver a la lista</a></p>
      <form class="search report-form" onSubmit={submit} key={params.toString()}>
        <Choices mod={mod} spec={spec} />
        <label for="buscar">Buscar</label>
        <input id="buscar" name="q" type="search" defaultValue={q} />
        <Filters mod={mod} modules={modules} params={params} problems={problems} />
        {problems.size > 0 && <p class="error" role="alert">Revise {problems.size === 1 ? 'el filtro marcado' : `los ${problems.size} filtros marcados`}</p>}
        <button type="submit">Ver informe</button>
      </form>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {result !== undefined && <ReportView mod={mod} spec={result.query === query ? spec : result.spec} data={result.data} loading={loading} />}
    </>
  )
}

/** How to group and what to sum; named as the address's parameters. */
function Choices ({ mod, spec }: { mod: ModuleInfo, spec: ReportSpec }) {
  const keys = keyFields(mod)
  const numbers = numberFields(mod)
  const [first, second] = spec.keys
  // `selected` on the option: a select has no default value of its own (console/src/filters.tsx).
  const options = (chosen: string | undefined) => keys.map((k) => <option key={k.nombre} value={k.nombre} selected={k.nombre === chosen}>{k.etiqueta}</option>)
  return (
    <fieldset class="filters">
      <legend>Informe</legend>
      <span>
        <label for="r-por">Agrupar por</label>
        <select id="r-por" name="_por">{options(first?.nombre)}</select>
      </span>
      <span>
        <label for="r-y">Y por</label>
        <select id="r-y" name="_y"><option value="">(nada más)</option>{options(second?.nombre)}</select>
      </span>
      <span>
        <label for="r-intervalo">Fechas por</label>
        <select id="r-intervalo" name="_intervalo">
          {Object.entries(INTERVALS).map(([v, text]) => <option key={v} value={v} selected={v === spec.interval}>{text.charAt(0).toUpperCase() + text.slice(1)}</option>)}
        </select>
      </span>
      {numbers.length > 0 && (
        <>
          {numbers.map((f) => (
            <span key={f.nombre}>
              <label class="check"><input type="checkbox" name="_sumar" value={f.nombre} defaultChecked={spec.sums.includes(f)} /> Sumar {fieldLabel(f)}</label>
            </span>
          ))}
          <span>
            <label for="r-grafico">Gráfico de</label>
            <select id="r-grafico" name="_grafico">
              <option value="cantidad">Registros</option>
              {spec.sums.map((f) => <option key={f.nombre} value={f.nombre} selected={f.nombre === spec.chart}>Suma de {fieldLabel(f)}</option>)}
            </select>
          </span>
        </>
      )}
    </fieldset>
  )
}
