/**
 * Every `format:` a field may declare, one file each beside this one
 * (format.ts says what a format declares). A format is added by its file and
 * its line here: the names modules.yaml accepts come from this object, and
 * `satisfies` fails the type check on a format that leaves anything out.
 */
import type { FieldDef } from '../../registry/types.js'
import { Rejected } from '../types.js'
import { dni } from './dni.js'
import { euros } from './euros.js'
import type { FieldFormatImpl, StringFormat } from './format.js'
import { telefono } from './telefono.js'

export const FORMATS = Object.freeze({
  dni,
  euros,
  telefono,
} satisfies Record<string, FieldFormatImpl>)

export type FieldFormat = keyof typeof FORMATS
/** The names, in the order above. */
export const FIELD_FORMATS = Object.freeze(Object.keys(FORMATS) as FieldFormat[])

/** What a field's format declares, if it has one. */
export function formatOf (f: Pick<FieldDef, 'format'>): FieldFormatImpl | undefined {
  return f.format === undefined ? undefined : FORMATS[f.format]
}

/** The checked shape of a field's format: a string format's pattern and check. */
export function shapeOf (f: Pick<FieldDef, 'format'>): StringFormat | undefined {
  const format = formatOf(f)
  return format?.type === 'string' ? format : undefined
}

/**
 * A filter value of a field with a string format, written as the format
 * stores it when it fits (`600 11 22 33` → `+34600112233`), so a filter
 * finds what was stored; as typed otherwise (a part of a value for `contiene`).
 */
export function filterText (f: Pick<FieldDef, 'format'>, text: string): string {
  const shape = shapeOf(f)
  if (shape === undefined) return text
  const stored = shape.check(text)
  return stored instanceof Rejected ? text : stored
}

export type { FieldFormatImpl, FilterKind, InputHint, StringFormat, DecimalFormat } from './format.js'
