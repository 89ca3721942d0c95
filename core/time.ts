/**
 * Dates and times in the service time zone (docs/user-guide.md "API"). Instants are stored
 * in UTC and shown as `YYYY-MM-DD HH:MM:SS` in the zone; input is that form
 * (read in the zone) or ISO 8601 with an offset. A local time that does not
 * exist (the spring DST gap) or an impossible date is rejected (null).
 */

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter (timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    })
    formatters.set(timeZone, f)
  }
  return f
}

interface Wall { y: number, mo: number, d: number, h: number, mi: number, s: number }

/** The wall clock of an instant in the zone, asked of Intl (exact, but slow: a few microseconds). */
function intlWallClock (ms: number, timeZone: string): Wall {
  const parts: Record<string, number> = {}
  for (const p of formatter(timeZone).formatToParts(ms)) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value)
  }
  return { y: parts.year!, mo: parts.month!, d: parts.day!, h: parts.hour!, mi: parts.minute!, s: parts.second! }
}

/** The zone's offset from UTC at an instant (ms, whole seconds), from Intl. */
function intlOffset (ms: number, timeZone: string): number {
  const w = intlWallClock(ms, timeZone)
  return utc(w.y, w.mo - 1, w.d, w.h, w.mi, w.s) - (ms - (((ms % 1000) + 1000) % 1000))
}

/**
 * Offsets by quarter hour: every record shown formats two or three
 * instants, and Intl is the costliest step of a list. A quarter hour whose
 * first and last millisecond have the same offset has it throughout (no
 * zone changes its offset twice within 15 minutes); one with a change in it
 * is answered by Intl for each instant. Exact either way.
 */
const QUARTER = 900_000
const offsets = new Map<string, Map<number, number | null>>()

/** The zone's offset throughout the quarter hour of `ms`, or null when it changes within it. */
function quarterOffset (ms: number, timeZone: string): number | null {
  let zone = offsets.get(timeZone)
  if (zone === undefined) { zone = new Map(); offsets.set(timeZone, zone) }
  const bucket = Math.floor(ms / QUARTER)
  let offset = zone.get(bucket)
  if (offset === undefined) {
    const first = intlOffset(bucket * QUARTER, timeZone)
    offset = first === intlOffset(bucket * QUARTER + QUARTER - 1, timeZone) ? first : null
    if (zone.size > 50_000) zone.clear()
    zone.set(bucket, offset)
  }
  return offset
}

function wallClock (ms: number, timeZone: string): Wall {
  const offset = quarterOffset(ms, timeZone)
  if (offset === null) return intlWallClock(ms, timeZone)
  const d = new Date(ms + offset)
  return { y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds() }
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0')

const DAY = 86_400_000
/** `00` … `59`. */
const TWO_DIGITS: readonly string[] = Array.from({ length: 60 }, (_, i) => pad(i))
/** `YYYY-MM-DD` of days since 1970-01-01 (a list shows instants of a few days, formatted by the thousand). */
const dayTexts = new Map<number, string>()

function dayText (day: number): string {
  let text = dayTexts.get(day)
  if (text === undefined) {
    const d = new Date(day * DAY)
    text = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
    if (dayTexts.size > 10_000) dayTexts.clear()
    dayTexts.set(day, text)
  }
  return text
}

/** Date.UTC without its quirk of reading years 0–99 as 1900–1999. */
function utc (y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number {
  const date = new Date(0)
  date.setUTCFullYear(y, mo, d)
  date.setUTCHours(h, mi, s, 0)
  return date.getTime()
}

/** The last instant formatDateTime wrote, and in which zone: a new record shows one instant twice (`_created`, `_modified`). */
let lastMs = NaN
let lastZone = ''
let lastText = ''

/** `YYYY-MM-DD HH:MM:SS` of an instant in the zone. */
export function formatDateTime (date: Date, timeZone: string): string {
  const ms = date.getTime()
  if (ms === lastMs && timeZone === lastZone) return lastText
  lastText = wallText(ms, timeZone)
  lastMs = ms
  lastZone = timeZone
  return lastText
}

function wallText (ms: number, timeZone: string): string {
  const offset = quarterOffset(ms, timeZone)
  if (offset !== null) {
    // The wall clock as milliseconds of a UTC calendar: its day's text, then the time of day.
    const wall = ms + offset
    const day = Math.floor(wall / DAY)
    const second = Math.floor((wall - day * DAY) / 1000)
    return `${dayText(day)} ${TWO_DIGITS[Math.floor(second / 3600)]}:${TWO_DIGITS[Math.floor(second / 60) % 60]}:${TWO_DIGITS[second % 60]}`
  }
  // The offset changes within this quarter hour: Intl answers for the instant.
  const w = intlWallClock(ms, timeZone)
  return `${pad(w.y, 4)}-${pad(w.mo)}-${pad(w.d)} ${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}`
}

/** Calendar year of an instant in the zone. */
export function yearIn (date: Date, timeZone: string): number {
  return wallClock(date.getTime(), timeZone).y
}

function validDate (y: number, mo: number, d: number): boolean {
  if (mo < 1 || mo > 12 || d < 1 || y < 1) return false
  return d <= new Date(utc(y, mo, 0)).getUTCDate()
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/**
 * Years a date or an instant may fall in (docs/operator-guide.md "Hostile input"). Beyond them the
 * `YYYY-MM-DD` form has no room, and before them the zone database's local
 * mean times and the Julian/Gregorian switch would make a value read back
 * different from what was written (`0001-01-01T00:00:00Z` came back as
 * `0001-12-31 23:45:16`).
 */
export const MIN_YEAR = 1000
export const MAX_YEAR = 9999

const inYears = (y: number): boolean => y >= MIN_YEAR && y <= MAX_YEAR

/** The instants whose UTC year is within MIN_YEAR–MAX_YEAR: isoText writes those itself. */
const ISO_FIRST = utc(MIN_YEAR, 0, 1)
const ISO_END = utc(MAX_YEAR + 1, 0, 1)

/**
 * An instant as `Date#toISOString` writes it (`YYYY-MM-DDTHH:MM:SS.sssZ`),
 * or without its milliseconds (`…:SSZ`, the form hashes use). Written from
 * the cached day texts: V8's `toISOString` asks the zone database for the
 * process's offset on every call, and a create writes four or five
 * instants (docs/performance.md "Instants without the zone database").
 * Years outside 1000–9999 are left to `toISOString`.
 */
export function isoText (date: Date, millis = true): string {
  const ms = date.getTime()
  if (!(ms >= ISO_FIRST && ms < ISO_END)) {
    const iso = date.toISOString()
    return millis ? iso : iso.replace(/\.\d{3}Z$/, 'Z')
  }
  const day = Math.floor(ms / DAY)
  const inDay = ms - day * DAY
  const second = Math.floor(inDay / 1000)
  const time = `${dayText(day)}T${TWO_DIGITS[Math.floor(second / 3600)]}:${TWO_DIGITS[Math.floor(second / 60) % 60]}:${TWO_DIGITS[second % 60]}`
  return millis ? `${time}.${pad(inDay - second * 1000, 3)}Z` : `${time}Z`
}

/**
 * An instant from client input, or null when the text is not a real time
 * or falls outside the years 1000–9999 as written, in UTC or in the
 * service zone (so it is stored and shown within them).
 */
export function parseDateTime (text: string, timeZone: string): Date | null {
  if (!inYears(Number(text.slice(0, 4)))) return null
  const d = parseInstant(text, timeZone)
  if (d === null) return null
  const y = d.getUTCFullYear()
  // No zone is a day away from UTC: only in a first or last year can the zone's year leave the range.
  return inYears(y) && ((y > MIN_YEAR && y < MAX_YEAR) || inYears(yearIn(d, timeZone))) ? d : null
}

function parseInstant (text: string, timeZone: string): Date | null {
  const iso = ISO.exec(text)
  if (iso !== null) {
    const s = iso[6] === undefined ? 0 : Number(iso[6])
    if (!validDate(Number(iso[1]), Number(iso[2]), Number(iso[3])) || Number(iso[4]) > 23 || Number(iso[5]) > 59 || s > 59) return null
    const off = iso[7]!
    if (off !== 'Z' && (Number(off.slice(1, 3)) > 23 || Number(off.slice(4)) > 59)) return null
    const ms = Date.parse(text)
    return Number.isNaN(ms) ? null : new Date(Math.floor(ms / 1000) * 1000)
  }
  const m = LOCAL.exec(text)
  if (m === null) return null
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  if (!validDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return null
  // Find the UTC instant whose wall clock in the zone reads the input. Two
  // passes settle any offset; if neither matches, the time falls in a gap.
  const target = utc(y, mo - 1, d, h, mi, s)
  let guess = target
  for (let i = 0; i < 3; i++) {
    const w = wallClock(guess, timeZone)
    const shown = utc(w.y, w.mo - 1, w.d, w.h, w.mi, w.s)
    if (shown === target) {
      // On the autumn fold both the earlier and later instant read the same;
      // take the earlier one.
      const earlier = guess - 3_600_000
      const we = wallClock(earlier, timeZone)
      return utc(we.y, we.mo - 1, we.d, we.h, we.mi, we.s) === target ? new Date(earlier) : new Date(guess)
    }
    guess += target - shown
  }
  return null
}

/** `YYYY-MM-DD` that names a real calendar day of the years 1000–9999. */
export function isValidDate (text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  return m !== null && inYears(Number(m[1])) && validDate(Number(m[1]), Number(m[2]), Number(m[3]))
}

/** `HH:MM` on a 24-hour clock. */
export function isValidTime (text: string): boolean {
  const m = /^(\d{2}):(\d{2})$/.exec(text)
  return m !== null && Number(m[1]) <= 23 && Number(m[2]) <= 59
}

/** Today's date in the zone, `YYYY-MM-DD`. */
export function today (now: Date, timeZone: string): string {
  return formatDateTime(now, timeZone).slice(0, 10)
}

/** The current instant truncated to whole seconds (what the API can show). */
export function nowSeconds (): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000)
}
