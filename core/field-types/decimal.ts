/** `decimal`: an amount with at most two decimals, stored exactly as `numeric(14,2)`; `format: euros` says it is euros (formats/euros.ts). */
import { Type } from '@sinclair/typebox'
import { asDeclared, described, NO_SEARCH, ORDERED } from './common.js'
import { formatOf } from './formats/index.js'
import { AS_JSON } from './plaintext.js'
import type { DecimalFormat } from './formats/format.js'
import { amountText } from '../spanish-text.js'
import { Rejected, type FieldTypeImpl } from './types.js'

/** JSON numbers are binary: 0.1 * 100 is not 10 exactly, so allow for the rounding error. */
function hasTwoDecimals (n: number): boolean {
  return Number.isFinite(n) && Math.abs(Math.round(n * 100) - n * 100) < 1e-6
}

export const decimalType: FieldTypeImpl = {
  input: (f) => Type.Number({
    // The text below replaces a missing description; spreading first keeps the key order of the snapshot.
    ...described(f),
    minimum: f.min ?? -999_999_999_999.99,
    maximum: f.max ?? 999_999_999_999.99,
    description: [f.description ?? 'Número con dos decimales como máximo', formatOf(f)?.description].filter((d) => d !== undefined).join('. '),
  }),
  output: () => Type.Number(),
  column: () => ({ type: 'decimal', precision: 14, scale: 2 }),
  filterable: true,
  indexed: true,
  operators: ORDERED,
  ...NO_SEARCH,
  filterValue: (text) => /^-?\d{1,12}(\.\d{1,2})?$/.test(text) ? Number(text) : new Rejected('debe ser un número con dos decimales como máximo'),
  normalize: (value) => hasTwoDecimals(value as number) ? Math.round((value as number) * 100) / 100 : new Rejected('admite como máximo dos decimales'),
  initial: asDeclared,
  defaultProblem: (declared) => typeof declared === 'number' ? undefined : 'the default of a decimal field must be a number',
  writeOnly: false,
  // The driver returns numeric columns as strings, to keep their precision.
  view: (stored) => Number(stored),
  printed: (value, f) => (formatOf(f)?.type === 'decimal' ? (formatOf(f) as DecimalFormat).printed : amountText)(value as number),
  ...AS_JSON,
}
