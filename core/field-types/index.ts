/**
 * Every field type of modules.yaml and its implementation. Typed with
 * `Record<FieldType, …>`: a name added to FIELD_TYPES (core/registry/types.ts)
 * fails the type check here until it has an implementation.
 */
import type { FieldDef, FieldType } from '../registry/types.js'
import { arrayType } from './array.js'
import { booleanType } from './boolean.js'
import { dateType } from './date.js'
import { fileType } from './file.js'
import { datetimeType } from './datetime.js'
import { decimalType } from './decimal.js'
import { integerType } from './integer.js'
import { passwordType } from './password.js'
import { refType } from './ref.js'
import { stringType } from './string.js'
import { textType } from './text.js'
import { timeType } from './time.js'
import { BLIND_INDEX_OPERATORS } from './common.js'
import type { FieldTypeImpl, FilterOperator } from './types.js'

export const FIELD_TYPES_IMPL: Readonly<Record<FieldType, FieldTypeImpl>> = Object.freeze({
  string: stringType,
  text: textType,
  integer: integerType,
  decimal: decimalType,
  boolean: booleanType,
  date: dateType,
  datetime: datetimeType,
  time: timeType,
  array: arrayType,
  ref: refType,
  password: passwordType,
  file: fileType,
})

/** The implementation of a declared field's type. */
export function typeOf (f: Pick<FieldDef, 'type'>): FieldTypeImpl {
  return FIELD_TYPES_IMPL[f.type]
}

/**
 * The filter operators of a declared field (docs/user-guide.md "Listing"); the list code and
 * the API documentation both ask here. All of its type's when it is
 * filterable; its type's search operators otherwise (`contiene` and `vacio`
 * on a text, `vacio` on an array); an encrypted field only through its
 * blind index, when it is searchable.
 */
export function operatorsOf (f: Pick<FieldDef, 'type' | 'filterable' | 'encrypted' | 'searchable'>): readonly FilterOperator[] {
  if (f.encrypted) return f.searchable ? BLIND_INDEX_OPERATORS : []
  return f.filterable ? typeOf(f).operators : typeOf(f).searchOperators
}

export { Rejected, FILTER_OPERATORS, type ColumnValue, type FieldTypeImpl, type FilterOperator, type InstantFormat } from './types.js'
