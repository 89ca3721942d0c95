/**
 * Plain SVG bar charts for the dashboards (docs/user-guide.md "Console": no chart library): a
 * picture for the sighted, hidden from assistive technology, which reads
 * the table printed beside each chart instead (WCAG 1.1.1 through the
 * equivalent table). Colours meet AA contrast on white.
 */

import { numberText } from './spanish.js'

export interface Bar { label: string, value: number }

const BAR = '#0b4f9c'
const TEXT = '#1b1f24'

interface HBarProps { bars: Bar[], width?: number, labelW?: number, format?: (value: number) => string }

/** Horizontal bars, one per row: for categories such as states. */
export function HBarChart ({ bars, width = 420, labelW = 130, format = numberText }: HBarProps) {
  const max = Math.max(1, ...bars.map((b) => b.value))
  const row = 26
  const plot = width - labelW - 70
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${bars.length * row + 4}`} width={width} height={bars.length * row + 4} aria-hidden="true" focusable="false">
      {bars.map((b, i) => (
        <g key={b.label} transform={`translate(0 ${i * row + 2})`}>
          <text x={labelW - 6} y={row / 2 + 4} text-anchor="end" fill={TEXT} font-size="13">{b.label}</text>
          <rect x={labelW} y={3} width={Math.max(1, (b.value / max) * plot)} height={row - 8} fill={BAR} />
          <text x={labelW + Math.max(1, (b.value / max) * plot) + 4} y={row / 2 + 4} fill={TEXT} font-size="13">{format(b.value)}</text>
        </g>
      ))}
    </svg>
  )
}

/** Vertical columns in order: for a time series such as months. */
export function ColumnChart ({ bars, height = 180 }: { bars: Bar[], height?: number }) {
  const max = Math.max(1, ...bars.map((b) => b.value))
  const col = 40
  const top = 18
  const bottom = 34
  const plot = height - top - bottom
  const width = Math.max(120, bars.length * col + 8)
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${height}`} width={width} height={height} aria-hidden="true" focusable="false">
      <line x1="4" x2={width - 4} y1={top + plot} y2={top + plot} stroke={TEXT} />
      {bars.map((b, i) => {
        const h = (b.value / max) * plot
        const x = 8 + i * col
        return (
          <g key={b.label}>
            <rect x={x} y={top + plot - h} width={col - 10} height={Math.max(h, 1)} fill={BAR} />
            <text x={x + (col - 10) / 2} y={top + plot - h - 4} text-anchor="middle" fill={TEXT} font-size="12">{numberText(b.value)}</text>
            <text x={x + (col - 10) / 2} y={top + plot + 14} text-anchor="middle" fill={TEXT} font-size="11">{b.label.slice(5) || b.label}</text>
            {(i === 0 || b.label.slice(5) === '01') && <text x={x} y={top + plot + 28} fill={TEXT} font-size="11">{b.label.slice(0, 4)}</text>}
          </g>
        )
      })}
    </svg>
  )
}

/** Colours of a stacked chart's series, each at least 3:1 on white; the last for the rest (`Otros`). */
export const SERIES = ['#0b4f9c', '#c24e00', '#1d6b32', '#7a3e9d', '#a4161a', '#00727a', '#8a6d00', '#4a525c']

export interface Stack { label: string, parts: number[] }

/** Horizontal bars split by a second key: each row's parts in the order of `series`, the row's total at its end. */
export function StackedBarChart ({ rows, series, width = 560, labelW = 130, format = String }: { rows: Stack[], series: string[] } & Omit<HBarProps, 'bars'>) {
  const totals = rows.map((r) => r.parts.reduce((a, b) => a + b, 0))
  const max = Math.max(1, ...totals)
  const row = 26
  const plot = width - labelW - 70
  return (
    <div class="stacked-chart" aria-hidden="true">
      <ul class="legend">
        {series.map((s, i) => <li key={s}><svg class="swatch" viewBox="0 0 12 12" width="12" height="12" focusable="false"><rect width="12" height="12" rx="2" fill={SERIES[i % SERIES.length]} /></svg>{s}</li>)}
      </ul>
      <svg class="chart" viewBox={`0 0 ${width} ${rows.length * row + 4}`} width={width} height={rows.length * row + 4} focusable="false">
        {rows.map((r, i) => {
          let x = labelW
          return (
            <g key={r.label} transform={`translate(0 ${i * row + 2})`}>
              <text x={labelW - 6} y={row / 2 + 4} text-anchor="end" fill={TEXT} font-size="13">{r.label}</text>
              {r.parts.map((v, j) => {
                const w = (v / max) * plot
                const at = x
                x += w
                return v > 0 ? <rect key={j} x={at} y={3} width={Math.max(1, w)} height={row - 8} fill={SERIES[j % SERIES.length]} /> : null
              })}
              <text x={x + 4} y={row / 2 + 4} fill={TEXT} font-size="13">{format(totals[i] ?? 0)}</text>
            </g>
          )
        })}
      </svg>
    </div>
  )
}
