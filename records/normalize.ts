/**
 * Second pass over a body that passed the JSON schema: the checks a schema
 * cannot make (real calendar dates, times in the DST gap, two decimals,
 * required fields set to null, control characters and malformed Unicode,
 * nesting inside arrays, a structured array's items sub-field by sub-field)
 * and the conversion to column values.
 * Encryption and password hashing happen later, in the record service.
 */
import { AppError, type ErrorDetail } from '../core/errors.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { Rejected, typeOf, type ColumnValue } from '../core/field-types/index.js'
import { checkedValue, normalizeItems } from '../core/field-types/array-items.js'

export type { ColumnValue }

export interface Normalized {
  /** Field name → value, only for the fields present (or defaulted). */
  values: Map<FieldDef, ColumnValue>
}

/**
 * Declared fields of `body` converted; keys starting with `_` are ignored.
 * On create, defaults fill the fields not sent and required fields must end
 * up with a value.
 */
export function normalizeBody (mod: ModuleDef, body: Record<string, unknown>, mode: 'create' | 'update', timeZone: string): Normalized {
  const values = new Map<FieldDef, ColumnValue>()
  const invalid: ErrorDetail[] = []
  const missing: ErrorDetail[] = []
  for (const [key, raw] of Object.entries(body)) {
    if (key.startsWith('_')) continue
    const f = mod.fieldMap.get(key)
    if (f === undefined) { invalid.push({ campo: key, mensaje: 'no es un campo de este módulo' }); continue }
    if (raw === null && f.required) { missing.push({ campo: key, mensaje: 'es obligatorio' }); continue }
    // A declared format (a DNI's check letter) is checked here, before any encryption.
    // A structured array's items, checked sub-field by sub-field, are named by path (`testigos[0].nombre`).
    const v = raw === null || f.items !== undefined ? raw as ColumnValue : checkedValue(f, raw, timeZone)
    if (v instanceof Rejected) invalid.push({ campo: key, mensaje: v.mensaje })
    else if (f.items !== undefined && Array.isArray(v)) {
      const { value, problems } = normalizeItems(f, v, timeZone)
      for (const p of problems) (p.missing ? missing : invalid).push({ campo: p.campo, mensaje: p.mensaje })
      values.set(f, value)
    } else values.set(f, v)
  }
  if (mode === 'create') {
    for (const f of mod.fields) {
      if (values.has(f) || body[f.name] !== undefined) continue
      if (f.default !== undefined) values.set(f, typeOf(f).initial(f.default, timeZone))
      else if (f.required) missing.push({ campo: f.name, mensaje: 'es obligatorio' })
    }
  }
  if (missing.length > 0) throw new AppError('DATOS_REQUERIDOS', missing)
  if (invalid.length > 0) throw new AppError('DATOS_INVALIDOS', invalid)
  return { values }
}
