/**
 * A dashboard per module (docs/user-guide.md "Console") from the resumen aggregates
 * (GET /{module}/resumen, docs/user-guide.md "Summaries (resumen)"): the
 * records by state and by month, each a chart with the same figures in a
 * table beside it. The month is of the module's first filterable date or
 * date-time field, else of its creation (`_created`).
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { ColumnChart, HBarChart, type Bar } from './charts.js'
import { fieldOf, inSentence, labelIn, valueLabel, type ModuleInfo } from './modules.js'
import { monthText, numberText } from './spanish.js'
import { href } from './route.js'

export const DASHBOARD_PATH = '_panel'
const NONE = '(sin valor)'
const MONTHS = 24

interface Summary { grupos: Array<Record<string, unknown> & { cantidad: number }>, total: number }
/** A bar as shown: a state by its label, a month `03/2026`. */
type Shown = (label: string) => string

/** The field whose months the dashboard counts. */
export function monthField (mod: ModuleInfo): string {
  return mod.campos.find((f) => (f.tipo === 'date' || f.tipo === 'datetime') && f.filtrable && !f.cifrado)?.nombre ?? '_created'
}

async function summary (mod: ModuleInfo, key: string, sort: string): Promise<Bar[]> {
  const query = new URLSearchParams({ agrupar: key, sort, limit: '1000' })
  const res = await request<{ data: Summary }>('GET', `/${mod.ruta}/resumen?${query.toString()}`)
  return res.data.grupos.map((g) => ({ label: g[key] == null ? NONE : String(g[key]), value: g.cantidad }))
}

/** Months in order with the ones between that have no record as 0, so the columns keep time's spacing. */
function withEmptyMonths (bars: Bar[]): Bar[] {
  const first = bars[0]
  const last = bars.at(-1)
  if (first === undefined || last === undefined) return bars
  const counts = new Map(bars.map((b) => [b.label, b.value]))
  const out: Bar[] = []
  let [y, m] = first.label.split('-').map(Number) as [number, number]
  for (let label = first.label; label <= last.label && out.length < 1200; label = `${y}-${String(m).padStart(2, '0')}`) {
    out.push({ label, value: counts.get(label) ?? 0 })
    if (++m > 12) { m = 1; y++ }
  }
  return out
}

export function DashboardScreen ({ modules, ruta }: { modules: ModuleInfo[], ruta?: string | undefined }) {
  const mod = modules.find((m) => m.ruta === ruta) ?? modules[0]
  const [states, setStates] = useState<Bar[]>()
  const [months, setMonths] = useState<Bar[]>()
  const [total, setTotal] = useState<number>()
  const [error, setError] = useState<string>()
  const field = mod === undefined ? '_created' : monthField(mod)

  useEffect(() => {
    if (mod === undefined) return
    setStates(undefined)
    setMonths(undefined)
    setError(undefined)
    const fail = (err: unknown): void => setError(err instanceof ApiError ? err.message : 'Error inesperado')
    request<{ data: Summary }>('GET', `/${mod.ruta}/resumen`).then((res) => setTotal(res.data.total), fail)
    if (mod.campo_estado !== undefined) summary(mod, mod.campo_estado, '-cantidad').then(setStates, fail)
    // Oldest first, the last MONTHS months that have records; records with no date after them.
    summary(mod, `${field}:mes`, `${field}:mes`).then((bars) => {
      const dated = withEmptyMonths(bars.filter((b) => b.label !== NONE))
      setMonths([...dated.slice(-MONTHS), ...bars.filter((b) => b.label === NONE)])
    }, fail)
  }, [mod?.ruta])

  if (mod === undefined) return <><h1>Paneles</h1><p>No hay módulos que pueda ver.</p></>
  const stateField = mod.campo_estado === undefined ? undefined : fieldOf(mod, mod.campo_estado)
  const stateLabel: Shown = (v) => v === NONE ? v : valueLabel(stateField, v)
  return (
    <>
      <h1>Panel: {mod.etiqueta}</h1>
      <nav aria-label="Panel de cada módulo" class="chooser">
        <ul>{modules.map((m) => <li key={m.ruta}><a href={href([DASHBOARD_PATH, m.ruta])} aria-current={m.ruta === mod.ruta ? 'page' : undefined}>{m.etiqueta}</a></li>)}</ul>
      </nav>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {total !== undefined && <p class="total">{total === 1 ? '1 registro' : `${numberText(total)} registros`} en total</p>}
      {mod.campo_estado !== undefined && (
        <Figure id="por-estado" title={`Registros por ${inSentence(labelIn(mod, mod.campo_estado))}`} head={labelIn(mod, mod.campo_estado)} bars={states} shown={stateLabel} chart={(b) => <HBarChart bars={b.map((x) => ({ ...x, label: stateLabel(x.label) }))} />} />
      )}
      <Figure id="por-mes" title={`Registros por mes (${inSentence(labelIn(mod, field))})`} head="Mes" bars={months} shown={monthText} chart={(b) => <ColumnChart bars={b} />} />
    </>
  )
}

function Figure ({ id, title, head, bars, shown, chart }: { id: string, title: string, head: string, bars: Bar[] | undefined, shown: Shown, chart: (bars: Bar[]) => ComponentChildren }) {
  return (
    <section class="figure" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {bars === undefined
        ? <p aria-busy="true">Cargando…</p>
        : bars.length === 0
          ? <p>Sin registros.</p>
          : (
            <div class="figure-body">
              <div class="chart-wrap">{chart(bars)}</div>
              <table>
                <caption class="visually-hidden">{title}</caption>
                <thead><tr><th scope="col">{head}</th><th scope="col">Registros</th></tr></thead>
                <tbody>{bars.map((b) => <tr key={b.label}><th scope="row">{shown(b.label)}</th><td class="number">{numberText(b.value)}</td></tr>)}</tbody>
              </table>
            </div>
            )}
    </section>
  )
}
