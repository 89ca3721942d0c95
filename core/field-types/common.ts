/** Small rules several field types share, each named for what it means. */
import { Type, type TSchema } from '@sinclair/typebox'
import type { FieldDef } from '../registry/types.js'
import { nowSeconds } from '../time.js'
import type { ColumnValue, DeclaredDefault, FilterOperator } from './types.js'

/** Operators of a value with an order but no substring: everything except `contiene`. */
export const ORDERED: readonly FilterOperator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'vacio']

/** Every operator: text that can also be searched by substring. */
export const SEARCHABLE: readonly FilterOperator[] = [...ORDERED, 'contiene']

/**
 * A searchable encrypted field is compared through its blind index: only
 * equality (one value or several) and whether it has a value mean anything.
 */
export const BLIND_INDEX_OPERATORS: readonly FilterOperator[] = ['eq', 'in', 'vacio']

/** A type with no search of its own: `vacio` (when filterable) means null. */
export const NO_SEARCH = { searchOperators: [], textSearch: false, empty: 'null' } as const

/**
 * A declared default as the value to store. Only date and datetime read
 * `now` as the clock (each has its own rule); for a text field "now" is
 * just the text.
 */
export function asDeclared (declared: DeclaredDefault): ColumnValue {
  return declared
}

/** `default: now` of an instant: the current second. */
export function nowOrDeclared (declared: DeclaredDefault): ColumnValue {
  return declared === 'now' ? nowSeconds() : declared
}

/** A stored value that is already its API form. */
export function asStored (stored: unknown): unknown {
  return stored
}

/** Output schema of a value the API writes as a string (enum values kept, for clients). */
export function stringOutput (f: FieldDef): TSchema {
  return Type.String(f.enum !== undefined ? { enum: [...f.enum] } : {})
}

/** Makes a schema also accept null (JSON Schema type arrays, OpenAPI 3.1). */
export function nullable (schema: TSchema): TSchema {
  const s = { ...schema } as Record<string, unknown>
  if (typeof s.type === 'string') s.type = [s.type, 'null']
  if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...(s.enum as unknown[]), null]
  return s as TSchema
}

/** `description` of modules.yaml, when given, for an input schema. */
export function described (f: FieldDef): { description?: string } {
  return f.description !== undefined ? { description: f.description } : {}
}

/**
 * A field's schema as the OpenAPI document shows it to a person
 * (docs/administrator-guide.md "Labels"): its label as `title`, its help
 * text before the description.
 */
export function labelled (f: FieldDef, schema: TSchema): TSchema {
  const s = { ...schema, title: f.label } as Record<string, unknown>
  if (f.help !== undefined) s.description = typeof s.description === 'string' ? `${f.help}${/[.!?:]$/.test(f.help) ? '' : '.'} ${s.description}` : f.help
  // An enum's value labels, where any differs from its value: what a person reads beside each value.
  const values = f.enum !== undefined && f.enumLabels !== undefined && f.enum.some((v) => f.enumLabels![v] !== v)
    ? `Valores: ${f.enum.map((v) => `${v} (${f.enumLabels![v]!})`).join(', ')}.`
    : undefined
  if (values !== undefined) s.description = typeof s.description === 'string' ? `${s.description}${/[.!?:]$/.test(s.description) ? '' : '.'} ${values}` : values
  return s as TSchema
}

/** The problem of any `default:` on a type that takes none. */
export function takesNoDefault (type: string): () => string {
  return () => `a ${type} field takes no default`
}
