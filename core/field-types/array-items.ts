/**
 * A structured array's items (docs/user-guide.md "Structured arrays"):
 * objects whose keys are declared sub-fields of scalar types. Their input
 * and output schemas, and the second pass over items that passed the
 * schema: each sub-field normalised by its type and format, problems named
 * by path (`testigos[2].dni`). Encryption of sub-fields is the records
 * layer's (records/item-fields.ts).
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { canonicalJson } from '../canonical.js'
import type { FieldDef, Registry } from '../registry/types.js'
import { labelled, nullable } from './common.js'
import { shapeOf } from './formats/index.js'
import { Rejected, typeOf, type ColumnValue } from './index.js'

/** Item sub-field types whose values are strings (the rest are JSON numbers or booleans). */
const STRING_VALUED = new Set(['string', 'text', 'date', 'datetime', 'time'])

/** Input schema of one item: declared keys only; null on an optional sub-field means none. */
export function itemInput (items: readonly FieldDef[], registry: Registry): TSchema {
  const props = Object.fromEntries(items.map((s) => {
    const schema = nullable(labelled(s, typeOf(s).input(s, registry)))
    return [s.name, s.required ? schema : Type.Optional(schema)]
  }))
  return Type.Object(props, { additionalProperties: false })
}

/**
 * Output schema of one item: the declared sub-fields (withheld encrypted
 * ones absent). Items stored before the declaration may hold other keys,
 * or be texts, numbers or booleans: they are shown as stored.
 */
export function itemOutput (items: readonly FieldDef[]): TSchema {
  const props = Object.fromEntries(items.map((s) => [s.name, Type.Optional(nullable(labelled(s, s.type === 'datetime' ? Type.String({ description: 'ISO 8601 en UTC' }) : typeOf(s).output(s))))]))
  return Type.Union([
    Type.Object(props, { additionalProperties: true }),
    Type.Unsafe<unknown>({ type: ['string', 'number', 'boolean'], description: 'Elemento guardado antes de declarar los campos' }),
  ])
}

/** The text an item's value is encrypted and digested as: a string as it is, anything else as canonical JSON. */
export function itemPlaintext (value: unknown): string {
  return typeof value === 'string' ? value : canonicalJson(value)
}

/** A sub-field's value back from its plaintext. */
export function itemValue (sub: FieldDef, text: string): unknown {
  return STRING_VALUED.has(sub.type) ? text : JSON.parse(text) as unknown
}

/** A non-null client value of a declared field as stored: its type's checks, then its format's (before any encryption). */
export function checkedValue (f: FieldDef, raw: unknown, timeZone: string): ColumnValue | Rejected {
  const v = typeOf(f).normalize(raw, timeZone)
  const shape = shapeOf(f)
  return shape !== undefined && typeof v === 'string' ? shape.check(v) : v
}

export interface ItemProblem {
  readonly campo: string
  readonly mensaje: string
  /** A required sub-field without a value (Datos requeridos), else an invalid value. */
  readonly missing: boolean
}

/**
 * Items as stored: each object's sub-fields in declared order, converted by
 * type (date-times as UTC `YYYY-MM-DDTHH:MM:SSZ`), null ones left out.
 */
export function normalizeItems (f: FieldDef, items: readonly unknown[], timeZone: string): { value: unknown[], problems: ItemProblem[] } {
  const subs = f.items!
  const problems: ItemProblem[] = []
  const value = items.map((item, i) => {
    const at = (name: string): string => `${f.name}[${i}].${name}`
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      problems.push({ campo: `${f.name}[${i}]`, mensaje: 'debe ser de tipo objeto', missing: false })
      return item
    }
    const given = item as Record<string, unknown>
    for (const key of Object.keys(given)) {
      if (!subs.some((s) => s.name === key)) problems.push({ campo: at(key), mensaje: 'no es un campo de este módulo', missing: false })
    }
    const out: Record<string, unknown> = {}
    for (const s of subs) {
      const raw = given[s.name]
      if (raw === null || raw === undefined) {
        if (s.required) problems.push({ campo: at(s.name), mensaje: 'es obligatorio', missing: true })
        continue
      }
      const v = checkedValue(s, raw, timeZone)
      if (v instanceof Rejected) problems.push({ campo: at(s.name), mensaje: v.mensaje, missing: false })
      else out[s.name] = v instanceof Date ? typeOf(s).toPlaintext(v) : v
    }
    return out
  })
  return { value, problems }
}
