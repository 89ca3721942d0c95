/**
 * `format: telefono` (docs/administrator-guide.md "modules.yaml reference"):
 * a telephone number, Spanish or international, stored in its one
 * international form (E.164: `+`, the country code and the number, no
 * spaces), so that equal numbers are equal text: a filter, a unique value
 * and a blind index find the number however it was typed.
 *
 * - Spanish: 9 digits starting with 6, 7, 8 or 9, with or without `+34`
 *   or `0034` in front: `600 11 22 33`, `+34 600112233` → `+34600112233`.
 * - Another country: `+` (or `00`) and its country code, 7 to 15 digits in
 *   all: `+44 20 7946 0958` → `+442079460958`.
 * Spaces are allowed anywhere between the digits and removed; anything else
 * (hyphens, dots, brackets, letters) is refused, not removed. An empty
 * string stays allowed, meaning none, as on any string field.
 */
import { Rejected } from '../types.js'
import type { StringFormat } from './format.js'

const PATTERN = '^ *((((\\+|00) *34 *)?[6-9]( *[0-9]){8}|(\\+|00) *[1-9]( *[0-9]){6,14}) *)?$'
const SHAPE = new RegExp(PATTERN)
const SPANISH = /^34[6-9][0-9]{8}$/

/** The number as stored (`+34600112233`), or why it is not one. */
function checkTelefono (value: string): string | Rejected {
  if (!SHAPE.test(value)) return new Rejected('no es un teléfono: 9 cifras, o + y el prefijo del país')
  const typed = value.replace(/ /g, '')
  if (typed === '') return typed
  const international = typed.startsWith('+') ? typed.slice(1) : typed.startsWith('00') ? typed.slice(2) : `34${typed}`
  if (international.startsWith('34') && !SPANISH.test(international)) return new Rejected('un teléfono español tiene 9 cifras y empieza por 6, 7, 8 o 9')
  return `+${international}`
}

export const telefono: StringFormat = {
  type: 'string',
  description: 'Un teléfono de 9 cifras, o con + y el prefijo del país; se guarda como +34600112233',
  pattern: PATTERN,
  check: checkTelefono,
  example: '+34600112233',
  importSample: '600 11 22 33',
  // The telephone keypad; no autofill: the number is someone else's, never the user's own.
  input: { type: 'tel', inputMode: 'tel', autocomplete: 'off', hint: 'Nueve cifras (600 11 22 33), o + y el prefijo del país (+44 20 7946 0958)' },
  // The whole number, typed any way the format accepts (the filter value is stored-formed first).
  filter: 'equals',
}
