/**
 * The text a value is encrypted, blind-indexed and digested as (docs/operator-guide.md "The hash chain"):
 * strings as they are, anything else as canonical JSON, so an auditor in
 * any language can recompute a digest from the API's output.
 */
import { canonicalJson } from '../canonical.js'
import type { FieldTypeImpl } from './types.js'

function plaintextOf (value: unknown): string {
  return typeof value === 'string' ? value : canonicalJson(value)
}

type PlaintextForm = Pick<FieldTypeImpl, 'toPlaintext' | 'fromPlaintext'>

/** Types whose values are strings: the text is the value. */
export const AS_TEXT: PlaintextForm = { toPlaintext: plaintextOf, fromPlaintext: (text) => text }

/** Numbers, booleans and arrays: canonical JSON, parsed back. */
export const AS_JSON: PlaintextForm = { toPlaintext: plaintextOf, fromPlaintext: (text) => JSON.parse(text) as unknown }
