/**
 * The `format:` a field may declare in modules.yaml (docs/administrator-guide.md
 * "modules.yaml reference"), each for one field type. A string format is a
 * shape the JSON schema states (OpenAPI `pattern`) and a check no pattern
 * can make, applied to a value before it is stored or encrypted
 * (records/normalize.ts). A decimal format only says what the number means
 * (`euros`: an amount, shown `200,50 €`); it checks nothing more.
 */
import type { FieldDef, FieldFormat, FieldType } from '../registry/types.js'
import { checkDni, DNI_PATTERN } from './dni.js'
import type { Rejected } from './types.js'

/** A checked shape of a string. */
export interface FormatShape {
  readonly pattern: string
  /** The value as stored, or why it does not fit. */
  check (value: string): string | Rejected
}

export interface FormatImpl {
  /** The one field type that may declare it. */
  readonly type: FieldType
  /** Said in the OpenAPI document. */
  readonly description: string
  /** String formats only. */
  readonly shape?: FormatShape
}

/** Typed with `Record<FieldFormat, …>`: a name added to FIELD_FORMATS fails the type check here until it has one. */
export const FORMATS: Readonly<Record<FieldFormat, FormatImpl>> = Object.freeze({
  dni: { type: 'string', description: 'DNI o NIE con su letra de control (se guarda en mayúsculas)', shape: { pattern: DNI_PATTERN, check: checkDni } },
  euros: { type: 'decimal', description: 'Importe en euros' },
})

/** The checked shape of a field's format, if it has one. */
export function shapeOf (f: Pick<FieldDef, 'format'>): FormatShape | undefined {
  return f.format === undefined ? undefined : FORMATS[f.format].shape
}
