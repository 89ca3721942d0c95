/**
 * An import's rows checked against the module's create schema exactly as
 * a POST's body is (docs/user-guide.md "Import (importar)"): the cheap look
 * at the body's shape first (http/body-shape.ts), then Ajv with the
 * service's options (http/ajv-options.ts), the problems worded by
 * http/validation-errors.ts. One validator per module, compiled on first
 * use; the route and `npm run import` share it.
 */
import { Ajv } from 'ajv'
import type { TObject } from '@sinclair/typebox'
import type { FastifySchemaValidationError } from 'fastify'
import type { ModuleDef, Registry } from '../core/registry/types.js'
import { AJV_OPTIONS } from '../http/ajv-options.js'
import { bodyShapeProblems } from '../http/body-shape.js'
import { validationError } from '../http/validation-errors.js'
import type { RowValidator } from '../records/import-rows.js'
import { buildSchemas } from './schemas.js'

const validators = new WeakMap<ModuleDef, RowValidator>()

function compile (schema: TObject): RowValidator {
  const { $id: _id, ...plain } = schema
  const validate = new Ajv({ ...AJV_OPTIONS }).compile(plain)
  return (body) => {
    const shape = bodyShapeProblems(schema, body)
    if (shape.length > 0) return validationError(shape, 'body').detalles ?? []
    if (validate(body)) return []
    return validationError(validate.errors as FastifySchemaValidationError[], 'body').detalles ?? []
  }
}

export function rowValidator (mod: ModuleDef, registry: Registry, timeZone: string): RowValidator {
  let v = validators.get(mod)
  if (v === undefined) {
    v = compile(buildSchemas(mod, registry, timeZone).create)
    validators.set(mod, v)
  }
  return v
}
