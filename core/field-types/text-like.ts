/**
 * What string, text and password have in common: a length-limited string
 * from the client, clean Unicode only (core/text.ts), stored and shown as
 * it is. They differ in column, default length, filtering and secrecy.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import type { FieldDef } from '../registry/types.js'
import { hint } from '../registry/suggest.js'
import { isCleanText } from '../text.js'
import { asDeclared, asStored, described, stringOutput } from './common.js'
import { shapeOf } from './formats/index.js'
import { AS_TEXT } from './plaintext.js'
import { Rejected, type DeclaredDefault, type FieldTypeImpl } from './types.js'

/** Input schema of a string-like field: its limits, pattern and enum values. */
export function textInput (f: FieldDef, extra: { writeOnly?: true } = {}): TSchema {
  const shape = shapeOf(f)
  return Type.String({
    ...described(f),
    ...(f.maxLength !== undefined && { maxLength: f.maxLength }),
    ...(f.minLength !== undefined && { minLength: f.minLength }),
    ...(f.pattern !== undefined && { pattern: f.pattern }),
    ...(shape !== undefined && { pattern: shape.pattern, description: [f.description, shape.description].filter((d) => d !== undefined).join('. ') }),
    ...(f.enum !== undefined && { enum: [...f.enum] }),
    ...extra,
  })
}

/** A string whose characters PostgreSQL can hold and a reader can see. */
export function cleanText (value: unknown): string | Rejected {
  return isCleanText(value as string) ? value as string : new Rejected('contiene caracteres de control o texto mal formado')
}

/** A text filter value: compared as given, within the length of any stored string. */
export function textFilter (text: string): string | Rejected {
  return text.length <= 500 ? text : new Rejected('admite como máximo 500 caracteres')
}

/** A `default:` written as text, and one of the enum values when there are some. */
export function textDefaultProblem (declared: DeclaredDefault, enumValues: readonly string[] | undefined): string | undefined {
  if (typeof declared !== 'string') return 'the default of a text field must be a string'
  if (enumValues !== undefined && !enumValues.includes(declared)) return `default "${declared}" is not one of ${enumValues.join(', ')}${hint(declared, enumValues)}`
  return undefined
}

/** The parts string, text and password share; each adds its column and limits. */
export const TEXT_LIKE = {
  output: stringOutput,
  filterValue: textFilter,
  normalize: cleanText,
  initial: asDeclared,
  defaultProblem: textDefaultProblem,
  view: asStored,
  printed: (value) => String(value),
  ...AS_TEXT,
} satisfies Partial<FieldTypeImpl>
