/**
 * Request bodies: only `application/json` (415 otherwise), at most 1 MiB
 * (413), well-formed UTF-8 and valid JSON (400 `JSON mal formado`), no
 * nesting deeper than 32 levels, at most 20,000 values, no number a double cannot hold and no
 * `__proto__` or `constructor.prototype` keys (400 `Datos inválidos`). An
 * empty body is no body, so a DELETE sent with a JSON content type still
 * works. Before the JSON schema runs, a cheap look at the body's top level
 * (http/body-shape.ts) refuses unknown keys and over-long arrays, stopping
 * at 20 problems, so no body can make validation slow.
 */
import fp from 'fastify-plugin'
import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import sjson from 'secure-json-parse'
import { AppError } from '../core/errors.js'
import { jsonTextProblem, MAX_TEXT_DEPTH, MAX_TEXT_VALUES } from '../core/json-text.js'
import { bodyShapeProblems } from '../http/body-shape.js'
import { appendRouteHook } from '../http/route-hooks.js'
import { validationError } from '../http/validation-errors.js'

export const BODY_LIMIT = 1024 * 1024

/**
 * Texts that may spell a forbidden key (escapes included), as
 * secure-json-parse tests them: only such a body is walked in full.
 */
const SUSPECT = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:|"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/

/** The body's value, or the error it is answered with. */
export function parseJsonBody (raw: Buffer): unknown {
  // Decoding would turn invalid bytes into U+FFFD and store them silently.
  if (!isUtf8(raw)) throw new AppError('JSON_MAL_FORMADO')
  const text = raw.toString('utf8')
  if (text.trim() === '') return undefined
  const problem = jsonTextProblem(text)
  // Refused before parsing: building such a value is the cost to avoid.
  if (problem?.kind === 'depth') throw new AppError('DATOS_INVALIDOS', [{ campo: 'body', mensaje: `admite como máximo ${MAX_TEXT_DEPTH} niveles de anidamiento` }])
  if (problem?.kind === 'values') throw new AppError('DATOS_INVALIDOS', [{ campo: 'body', mensaje: `admite como máximo ${MAX_TEXT_VALUES} valores en total` }])
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new AppError('JSON_MAL_FORMADO')
  }
  if (problem?.kind === 'number') throw new AppError('DATOS_INVALIDOS', [{ campo: problem.field ?? 'body', mensaje: 'contiene un número fuera del rango admitido' }])
  if (value !== null && typeof value === 'object' && SUSPECT.test(text)) {
    try {
      sjson.scan(value as Record<string, unknown>, { protoAction: 'error', constructorAction: 'error' })
    } catch {
      throw new AppError('DATOS_INVALIDOS', [{ campo: '__proto__', mensaje: 'clave prohibida' }])
    }
  }
  return value
}

async function jsonBodyPlugin (app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    let value: unknown
    try {
      value = parseJsonBody(body as Buffer)
    } catch (err) {
      done(err as AppError, undefined)
      return
    }
    done(null, value)
  })
  // Only routes with a body schema get the check (http/route-hooks.ts).
  app.addHook('onRoute', (route) => {
    const schema = route.schema?.body
    if (schema === undefined) return
    appendRouteHook(route, 'preValidation', (request, _reply, done) => {
      const problems = request.body === undefined ? [] : bodyShapeProblems(schema, request.body)
      done(problems.length > 0 ? validationError(problems, 'body') : undefined)
    })
  })
}

export default fp(jsonBodyPlugin, { name: 'policia-json-body', fastify: '5.x' })
