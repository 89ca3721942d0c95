/**
 * `format: dni` (docs/administrator-guide.md "modules.yaml reference"): a Spanish DNI (8 digits and a check letter) or
 * NIE (X, Y or Z, 7 digits and a check letter). The letter is
 * TRWAGMYFPDXBNJZSQVHLCKE[n mod 23], where n is the DNI's number, or the
 * NIE's with X=0, Y=1, Z=2 in front. What the blind index already folds
 * is folded here too: spaces around it are trimmed and letters stored in
 * upper case, so a search finds what was stored whatever the case. Spaces,
 * hyphens or dots inside are refused, not removed (`12345678-Z` is 400).
 * An empty string stays allowed, as on any string field: "none", which
 * `vacio` counts as empty (a form's blank input).
 * The NIF of a company (CIF, a letter first) is not a DNI.
 */
import { Rejected } from '../types.js'
import type { StringFormat } from './format.js'

const LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE'

/** The shape; the letter is checked by `checkDni`. */
const PATTERN = '^ *(([0-9]{8}|[XYZxyz][0-9]{7})[A-Za-z] *)?$'
const SHAPE = new RegExp(PATTERN)

/** The check letter of a DNI number (0 … 99,999,999); tests build valid DNIs with it. */
export function dniLetter (n: number): string {
  return LETTERS[n % 23]!
}

/** The value trimmed and in upper case, or why it is not a DNI or NIE. */
function checkDni (value: string): string | Rejected {
  if (!SHAPE.test(value)) return new Rejected('no es un DNI (8 cifras y letra) ni un NIE (X, Y o Z, 7 cifras y letra)')
  const upper = value.trim().toUpperCase()
  if (upper === '') return upper
  const digits = upper.slice(0, -1).replace(/^[XYZ]/, (c) => String('XYZ'.indexOf(c)))
  return dniLetter(Number(digits)) === upper.slice(-1) ? upper : new Rejected('letra de control incorrecta')
}

export const dni: StringFormat = {
  type: 'string',
  description: 'DNI o NIE con su letra de control (se guarda en mayúsculas)',
  pattern: PATTERN,
  check: checkDni,
  example: `12345678${dniLetter(12345678)}`,
  importSample: `12345678${dniLetter(12345678)}`,
  input: { type: 'text' },
  // As any string: a part of it, whatever the case.
  filter: 'contains',
}
