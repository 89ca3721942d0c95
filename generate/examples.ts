/**
 * The `example` of every request body and record in the OpenAPI document
 * (docs/user-guide.md "API explorer and OpenAPI document"): one value per
 * field type and format, within the field's enum, pattern, length and
 * range, so that each example validates against its own schema
 * (test/unit/openapi-examples.test.ts holds it).
 */
import type { FieldDef, FieldType, ModuleDef, Registry } from '../core/registry/types.js'
import { formatOf, shapeOf } from '../core/field-types/formats/index.js'

const DAY = '2026-06-01'
export const exampleId = (prefix: string, n = 1): string => `${prefix}-2026-${String(n).padStart(5, '0')}`

/** A text within the field's pattern and length: its format's example, else the first candidate that fits, else none. */
function text (f: FieldDef): string | undefined {
  const fits = (t: string): boolean => (f.pattern === undefined || new RegExp(f.pattern, 'u').test(t)) &&
    (f.minLength === undefined || t.length >= f.minLength) && (f.maxLength === undefined || t.length <= f.maxLength)
  const format = shapeOf(f)
  if (format !== undefined) return fits(format.example) ? format.example : undefined
  const candidates = [f.name, 'ejemplo', `Texto de ${f.name.replace(/_/g, ' ')}`, 'EJEMPLO', '00001', 'contraseña-de-ejemplo']
  const padded = candidates.map((t) => f.minLength !== undefined && t.length < f.minLength ? t.padEnd(f.minLength, t) : t)
  return padded.find(fits)
}

/** A decimal's example: its format's (an amount in euros), else the type's. */
function decimalExample (f: FieldDef): number {
  const format = formatOf(f)
  return format?.type === 'decimal' ? format.example : 90.5
}

const clamp = (n: number, f: FieldDef): number => Math.min(Math.max(n, f.min ?? n), f.max ?? n)

/** Each type's example; `input` is what a client writes (an instant as the service shows it is valid input too). */
const BY_TYPE: Readonly<Record<FieldType, (f: FieldDef, registry: Registry) => unknown>> = {
  string: (f) => f.enum?.[0] ?? text(f),
  text: (f) => text(f),
  password: (f) => text(f),
  integer: (f) => clamp(3, f),
  decimal: (f) => clamp(decimalExample(f), f),
  boolean: () => true,
  date: () => DAY,
  time: () => '10:30',
  datetime: () => `${DAY} 10:30:00`,
  // A structured array's items are objects of their sub-fields (docs/user-guide.md "Structured arrays").
  array: (f, registry) => f.items !== undefined ? [exampleFields(f.items, registry)] : ['Texto de ejemplo'],
  ref: (f, registry) => exampleId(registry.byName.get(f.ref!)!.prefix),
  // Files arrive through their upload route; a PUT keeps or drops them (docs/user-guide.md "Evidence files").
  file: () => [],
}

/** A field's example value, or undefined when no candidate fits its pattern. */
export function exampleOf (f: FieldDef, registry: Registry): unknown {
  return BY_TYPE[f.type](f, registry)
}

/** `{campo: valor}` of the given fields, leaving out any without an example. */
export function exampleFields (fields: readonly FieldDef[], registry: Registry): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f.name, exampleOf(f, registry)]).filter(([, v]) => v !== undefined))
}

/** A record as the API shows it: the system fields, then the fields a caller who may decrypt sees. */
export function recordExample (mod: ModuleDef, registry: Registry): Record<string, unknown> {
  const shown = mod.fields.filter((f) => f.type !== 'password')
  const when = `${DAY} 10:30:00`
  const user = exampleId(registry.usersModule.prefix)
  return {
    _id: exampleId(mod.prefix),
    ...exampleFields(shown, registry),
    _created: when,
    _created_by: user,
    _modified: when,
    _modified_by: user,
    _version: 1,
    _hash: 'a'.repeat(64),
    _deleted: null,
  }
}
