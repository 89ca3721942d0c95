/**
 * A report's result (console/src/report-screen.tsx): a chart for the
 * sighted, hidden from assistive technology, beside the table that holds
 * the same figures (console/src/charts.tsx), and `Descargar CSV`: that
 * table as a file, made here (GET /{module}/resumen answers JSON only).
 */
import { useState } from 'preact/hooks'
import { save } from './api.js'
import { HBarChart, SERIES, StackedBarChart, type Stack } from './charts.js'
import type { FieldInfo, ModuleInfo } from './modules.js'
import { fieldLabel, keyHeading, keyName, number, showKey, showSum, toCsv, type ReportSpec } from './report-data.js'

export interface Summary { grupos: Array<Record<string, unknown> & { cantidad: number }>, total_grupos: number, total: number }

/** Bars a chart draws at most (the table has every group). */
const CHART_ROWS = 40

interface Row { keys: string[], cantidad: number, sums: Array<number | null> }

function rowsOf (spec: ReportSpec, data: Summary): Row[] {
  return data.grupos.map((g) => ({
    keys: spec.keys.map((k) => showKey(k, spec.interval, g[keyName(k, spec.interval)])),
    cantidad: g.cantidad,
    sums: spec.sums.map((f) => { const v = g[`suma:${f.nombre}`]; return typeof v === 'number' ? v : null }),
  }))
}

const cents = (v: number): number => Math.round(v * 100) / 100
const lowerFirst = (s: string): string => /^.[a-záéíóúñ]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s

export function ReportView ({ mod, spec, data, loading }: { mod: ModuleInfo, spec: ReportSpec, data: Summary, loading: boolean }) {
  const [saved, setSaved] = useState<string>()
  const rows = rowsOf(spec, data)
  const headings = spec.keys.map((k) => keyHeading(k, spec.interval))
  const sumHeads = spec.sums.map((f) => `Suma de ${fieldLabel(f)}`)
  const complete = rows.length === data.total_grupos
  // The total of each sum is the groups' only when every group is here.
  const totals = spec.sums.map((_, i) => cents(rows.reduce((a, r) => a + (r.sums[i] ?? 0), 0)))
  const title = `Registros por ${headings.map(lowerFirst).join(' y por ')}`

  const csv = (): void => {
    const table: Array<Array<string | number>> = [
      [...headings, 'Registros', ...sumHeads],
      ...rows.map((r) => [...r.keys, r.cantidad, ...r.sums.map((v) => v ?? '')]),
      ...(complete ? [['Total', ...headings.slice(1).map(() => ''), data.total, ...totals]] : []),
    ]
    const name = `${mod.ruta}-informe-${new Date().toISOString().slice(0, 10)}.csv`
    save(new Blob([toCsv(table)]), name)
    setSaved(name)
  }

  return (
    <section class="figure" aria-labelledby="informe" aria-busy={loading ? 'true' : undefined}>
      <h2 id="informe">{title}</h2>
      <p class="total" role="status">
        {data.total === 1 ? '1 registro' : `${number(data.total)} registros`} en {data.total_grupos === 1 ? '1 grupo' : `${number(data.total_grupos)} grupos`}
        {!complete && ` (se muestran los ${number(rows.length)} primeros)`}
      </p>
      <p class="export">
        <button type="button" onClick={csv} disabled={rows.length === 0}>Descargar CSV</button>
        {saved !== undefined && <span class="ok" role="status">Descargado: {saved}</span>}
      </p>
      {rows.length === 0
        ? <p>Sin registros.</p>
        : (
          <div class="figure-body">
            <div class="chart-wrap">
              <Chart spec={spec} rows={rows} />
              {rows.length > CHART_ROWS && spec.keys.length === 1 && <p class="hint">El gráfico muestra los {CHART_ROWS} primeros grupos; la tabla, todos.</p>}
            </div>
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">{title}</caption>
                <thead><tr>{[...headings, 'Registros', ...sumHeads].map((h) => <th key={h} scope="col">{h}</th>)}</tr></thead>
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.keys.join('\0')}>
                      {r.keys.map((k, i) => i === 0 ? <th key={i} scope="row">{k}</th> : <td key={i}>{k}</td>)}
                      <td class="number">{number(r.cantidad)}</td>
                      {r.sums.map((v, i) => <td key={i} class="number">{showSum(spec.sums[i]!, v)}</td>)}
                    </tr>
                  ))}
                </tbody>
                {complete && (
                  <tfoot>
                    <tr>
                      <th scope="row">Total</th>
                      {headings.slice(1).map((h) => <td key={h} />)}
                      <td class="number">{number(data.total)}</td>
                      {totals.map((v, i) => <td key={i} class="number">{showSum(spec.sums[i]!, v)}</td>)}
                    </tr>
                  </tfoot>
                )}
              </table>
            </div>
          </div>
          )}
    </section>
  )
}

/** One key: a bar per group. Two: a bar per value of the first, split by the second (its 7 largest values, the rest as `Otros`). */
function Chart ({ spec, rows }: { spec: ReportSpec, rows: Row[] }) {
  const sum = spec.sums.findIndex((f) => f.nombre === spec.chart)
  const field: FieldInfo | undefined = spec.sums[sum]
  const value = (r: Row): number => sum < 0 ? r.cantidad : r.sums[sum] ?? 0
  const format = (v: number): string => field === undefined ? number(v) : showSum(field, cents(v))
  const labels = [...new Set(rows.map((r) => r.keys[0]!))].slice(0, CHART_ROWS)
  const labelW = Math.min(240, Math.max(80, 12 + 7.5 * Math.max(...labels.map((l) => l.length))))
  if (spec.keys.length === 1) {
    return <HBarChart bars={rows.slice(0, CHART_ROWS).map((r) => ({ label: r.keys[0]!, value: value(r) }))} width={labelW + 360} labelW={labelW} format={format} />
  }
  const bySeries = new Map<string, number>()
  for (const r of rows) bySeries.set(r.keys[1]!, (bySeries.get(r.keys[1]!) ?? 0) + value(r))
  const ranked = [...bySeries].sort((a, b) => b[1] - a[1]).map(([s]) => s)
  const shown = ranked.length <= SERIES.length ? ranked : ranked.slice(0, SERIES.length - 1)
  const series = shown.length < ranked.length ? [...shown, 'Otros'] : shown
  const stacks: Stack[] = labels.map((label) => {
    const parts = series.map(() => 0)
    for (const r of rows) {
      if (r.keys[0] !== label) continue
      const at = shown.indexOf(r.keys[1]!)
      parts[at < 0 ? series.length - 1 : at]! += value(r)
    }
    return { label, parts }
  })
  return <StackedBarChart rows={stacks} series={series} width={labelW + 430} labelW={labelW} format={format} />
}
