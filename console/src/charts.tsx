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

/** Horizontal bars, one per row: for categories such as states. */
export function HBarChart ({ bars, width = 420 }: { bars: Bar[], width?: number }) {
  const max = Math.max(1, ...bars.map((b) => b.value))
  const row = 26
  const labelW = 130
  const plot = width - labelW - 50
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${bars.length * row + 4}`} width={width} height={bars.length * row + 4} aria-hidden="true" focusable="false">
      {bars.map((b, i) => (
        <g key={b.label} transform={`translate(0 ${i * row + 2})`}>
          <text x={labelW - 6} y={row / 2 + 4} text-anchor="end" fill={TEXT} font-size="13">{b.label}</text>
          <rect x={labelW} y={3} width={Math.max(1, (b.value / max) * plot)} height={row - 8} fill={BAR} />
          <text x={labelW + Math.max(1, (b.value / max) * plot) + 4} y={row / 2 + 4} fill={TEXT} font-size="13">{numberText(b.value)}</text>
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
