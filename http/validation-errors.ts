/**
 * Turns Ajv validation errors into the error answer (docs/user-guide.md "Errors"): `Datos requeridos` when a
 * required field is missing, otherwise `Datos inválidos`, each with
 * `detalles: [{campo, mensaje}]` in Spanish, at most MAX_ERRORS of them.
 */
import type { FastifySchemaValidationError } from 'fastify'
import { AppError, type ErrorDetail } from '../core/errors.js'
import { MAX_ERRORS } from './body-shape.js'

function field (e: FastifySchemaValidationError, context?: string): string {
  const params = e.params as Record<string, unknown>
  // `/testigos/2/dni` → `testigos[2].dni` (docs/user-guide.md "Structured arrays").
  const base = e.instancePath.replace(/^\//, '').replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.')
  const extra = (params.missingProperty ?? params.additionalProperty) as string | undefined
  const name = extra === undefined ? base : base === '' ? extra : `${base}.${extra}`
  return name === '' ? (context ?? 'body') : name
}

function message (e: FastifySchemaValidationError): string {
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'required': return 'es obligatorio'
    case 'additionalProperties': return 'no es un campo de este módulo'
    case 'type': return `debe ser de tipo ${translateType(String(p.type))}`
    case 'enum': return `debe ser uno de: ${allowed(p.allowedValues as unknown[])}`
    case 'maxLength': return `admite como máximo ${String(p.limit)} caracteres`
    case 'minLength': return `necesita al menos ${String(p.limit)} caracteres`
    case 'pattern': return 'no tiene el formato esperado'
    case 'maximum': return `debe ser como máximo ${String(p.limit)}`
    case 'minimum': return `debe ser como mínimo ${String(p.limit)}`
    case 'maxItems': return `admite como máximo ${String(p.limit)} elementos`
    case 'maxProperties': return `admite como máximo ${String(p.limit)} claves`
    case 'anyOf': return 'no tiene un tipo válido'
    default: return 'no es válido'
  }
}

/**
 * The values an enum names, for a person: a nullable field's schema lists
 * `null` among them (core/field-types/common.ts `nullable`), which is no
 * value to choose and would leave a trailing separator.
 */
function allowed (values: unknown[]): string {
  return values.filter((v) => v !== null).map(String).join(', ')
}

function translateType (t: string): string {
  return ({ string: 'texto', integer: 'entero', number: 'número', boolean: 'booleano', array: 'lista', object: 'objeto', null: 'nulo' } as Record<string, string>)[t.split(',')[0]!] ?? t
}

export function validationError (errors: FastifySchemaValidationError[], context?: string): AppError {
  const missing = errors.filter((e) => e.keyword === 'required')
  const shown = (missing.length > 0 ? missing : errors).filter((e) => e.keyword !== 'anyOf' || errors.length === 1)
  const seen = new Set<string>()
  const detalles: ErrorDetail[] = []
  for (const e of shown) {
    const d = { campo: field(e, context), mensaje: message(e) }
    const k = `${d.campo}|${d.mensaje}`
    if (!seen.has(k)) { seen.add(k); detalles.push(d) }
    if (detalles.length === MAX_ERRORS) break
  }
  return new AppError(missing.length > 0 ? 'DATOS_REQUERIDOS' : 'DATOS_INVALIDOS', detalles)
}
