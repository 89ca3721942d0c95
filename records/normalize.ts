/**
 * Second pass over a body that passed the JSON schema: the checks a schema
 * cannot make (real calendar dates, times in the DST gap, two decimals,
 * required fields set to null, control characters and malformed Unicode,
 * nesting inside arrays) and the conversion to column values.
 * Encryption and password hashing happen later, in the record service.
 */
import { AppError, type ErrorDetail } from '../core/errors.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { isValidDate, isValidTime, nowSeconds, parseDateTime, today } from '../core/time.js'
import { isCleanText, jsonProblem } from '../core/text.js'

/** A declared field's value ready for storage (before encryption/hashing). */
export type ColumnValue = string | number | boolean | Date | unknown[] | null

function hasTwoDecimals (n: number): boolean {
  return Number.isFinite(n) && Math.abs(Math.round(n * 100) - n * 100) < 1e-6
}

/** Converts one client value; returns an error message when it does not fit. */
function convert (f: FieldDef, value: unknown, timeZone: string): ColumnValue | { error: string } {
  if (value === null) return null
  switch (f.type) {
    case 'date': return isValidDate(value as string) ? value as string : { error: 'no es una fecha válida (YYYY-MM-DD)' }
    case 'time': return isValidTime(value as string) ? value as string : { error: 'no es una hora válida (HH:MM)' }
    case 'datetime': {
      const d = parseDateTime(value as string, timeZone)
      return d === null ? { error: "no es una fecha y hora válida ('YYYY-MM-DD HH:MM:SS' o ISO 8601 con desfase)" } : d
    }
    case 'decimal': return hasTwoDecimals(value as number) ? Math.round((value as number) * 100) / 100 : { error: 'admite como máximo dos decimales' }
    case 'string':
    case 'text':
    case 'password':
      return isCleanText(value as string) ? value as string : { error: 'contiene caracteres de control o texto mal formado' }
    case 'array': {
      const problem = jsonProblem(value)
      return problem === undefined ? value as unknown[] : { error: problem }
    }
    default: return value as ColumnValue
  }
}

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
    const v = convert(f, raw, timeZone)
    if (v !== null && typeof v === 'object' && 'error' in v) invalid.push({ campo: key, mensaje: v.error })
    else values.set(f, v as ColumnValue)
  }
  if (mode === 'create') {
    for (const f of mod.fields) {
      if (values.has(f) || body[f.name] !== undefined) continue
      if (f.default !== undefined) values.set(f, defaultValue(f, timeZone))
      else if (f.required) missing.push({ campo: f.name, mensaje: 'es obligatorio' })
    }
  }
  if (missing.length > 0) throw new AppError('DATOS_REQUERIDOS', missing)
  if (invalid.length > 0) throw new AppError('DATOS_INVALIDOS', invalid)
  return { values }
}

function defaultValue (f: FieldDef, timeZone: string): ColumnValue {
  if (f.default === 'now') return f.type === 'date' ? today(new Date(), timeZone) : nowSeconds()
  return f.default as ColumnValue
}
