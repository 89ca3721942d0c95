/**
 * Values as a person of the force reads them on paper (docs/user-guide.md
 * "Printed records"), the formats the console shows: dates `dd/mm/aaaa`,
 * date-times `dd/mm/aaaa hh:mm`, numbers with a decimal comma (Intl
 * es-ES, which groups from five digits), amounts `200,50 €`. The inputs
 * are API values (`YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` in the service zone).
 */
const COUNT = new Intl.NumberFormat('es-ES', { maximumFractionDigits: 2 })
const TWO_PLACES = new Intl.NumberFormat('es-ES', { minimumFractionDigits: 2, maximumFractionDigits: 2 })
const EUROS = new Intl.NumberFormat('es-ES', { style: 'currency', currency: 'EUR' })

export const countText = (n: number): string => COUNT.format(n)
export const amountText = (n: number): string => TWO_PLACES.format(n)
export const eurosText = (n: number): string => EUROS.format(n)

/** `2026-06-04` → `04/06/2026`; `2026-06-04 10:30:00` → `04/06/2026 10:30` (seconds kept when not zero); other text as it is. */
export function dateText (text: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(text)
  if (m === null) return text
  const day = `${m[3]}/${m[2]}/${m[1]}`
  if (m[4] === undefined) return day
  return `${day} ${m[4]}:${m[5]}${m[6] !== undefined && m[6] !== '00' ? `:${m[6]}` : ''}`
}

export const yesNo = (b: unknown): string => b === true ? 'Sí' : 'No'
