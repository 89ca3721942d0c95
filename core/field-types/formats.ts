/**
 * The `format:` a string field may declare in modules.yaml: a shape the
 * JSON schema states (OpenAPI `pattern`, `format`) and a check no pattern
 * can make, applied to a value before it is stored or encrypted
 * (records/normalize.ts). One file per format.
 */
import type { FieldFormat } from '../registry/types.js'
import { checkDni, DNI_PATTERN } from './dni.js'
import type { Rejected } from './types.js'

export interface FormatImpl {
  readonly pattern: string
  /** Said in the OpenAPI document. */
  readonly description: string
  /** The value as stored, or why it does not fit. */
  check (value: string): string | Rejected
}

/** Typed with `Record<FieldFormat, …>`: a name added to FIELD_FORMATS fails the type check here until it has one. */
export const FORMATS: Readonly<Record<FieldFormat, FormatImpl>> = Object.freeze({
  dni: { pattern: DNI_PATTERN, description: 'DNI o NIE con su letra de control (se guarda en mayúsculas)', check: checkDni },
})
