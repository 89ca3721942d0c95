/**
 * Patterns of the dates, times and date-times core/time.ts reads, for the
 * OpenAPI document (docs/user-guide.md "The document is the contract"):
 * a value a pattern takes is one the service takes, except what no pattern
 * can say, which the description of a date-time names.
 */

/**
 * The calendar as time.ts reads it (`isValidDate`): years 1000–9999,
 * months 01–12, each month's days, 29 February of a leap year only. A
 * generated request is then one the service takes (docs/user-guide.md
 * "The document is the contract"); only what no pattern can say is left to
 * the service (a local time in the zone's spring gap).
 */
const YEAR = '[1-9]\\d{3}'
const MONTH_DAY = '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))'
/** Divisible by 4 and not by 100, or by 400. */
const LEAP_YEAR = '(?:[1-9]\\d(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)'
const DATE = `(?:${YEAR}-${MONTH_DAY}|${LEAP_YEAR}-02-29)`
const HOUR_MINUTE = '(?:[01]\\d|2[0-3]):[0-5]\\d'
const SECOND = '[0-5]\\d'

export const DATE_PATTERN = `^${DATE}$`
export const TIME_PATTERN = `^${HOUR_MINUTE}$`
/** How the API writes an instant: in the service time zone (core/time.ts formatDateTime). */
export const DATETIME_PATTERN = `^${DATE} ${HOUR_MINUTE}:${SECOND}$`
/** What it reads: the same, or ISO 8601 with an offset (core/time.ts parseDateTime). */
export const DATETIME_INPUT_PATTERN = `^${DATE}(?: ${HOUR_MINUTE}:${SECOND}|T${HOUR_MINUTE}(?::${SECOND}(?:\\.\\d{1,9})?)?(?:Z|[+-]${HOUR_MINUTE}))$`

/** What only the service can check of a date-time it reads: said where the pattern stops. */
const DATETIME_REFUSED = 'el servicio rechaza una hora que no existe en esa zona (el salto del horario de verano) y un instante fuera de los años 1000 a 9999'

export const datetimeText = (timeZone: string, input: boolean): string => input
  ? `'YYYY-MM-DD HH:MM:SS' en la zona del servicio (${timeZone}) o ISO 8601 con desfase (2026-06-01T10:30:00+02:00); ${DATETIME_REFUSED}`
  : `'YYYY-MM-DD HH:MM:SS' en la zona del servicio (${timeZone})`
