/**
 * The response headers the OpenAPI document declares (docs/user-guide.md
 * "API explorer and OpenAPI document"), as the service sends them:
 * `X-Request-Id` on every answer (app.ts), `RateLimit-*` on every counted
 * route (http/rate-limit.ts; not /health, not /ready, and not for an
 * address of RATE_LIMIT_IP_EXEMPT without a token, hence not required),
 * `Retry-After` on a 429 and on the file store's 503, `ETag` on an answer that carries one record
 * (generate/record-request.ts).
 */
type Schema = Record<string, unknown>

const header = (description: string, schema: Schema, required = true): Schema => ({ description, required, schema })

const X_REQUEST_ID = header('Id de la petición: el X-Request-Id enviado (1 a 64 letras, cifras, _ . -) o uno nuevo; aparece en los registros del servicio', { type: 'string', pattern: '^[\\w.-]{1,64}$' })

const RATE_LIMIT = {
  'RateLimit-Limit': header('Peticiones que admite la ventana más ajustada (por IP o por token)', { type: 'integer', minimum: 0 }, false),
  'RateLimit-Remaining': header('Peticiones que quedan en esa ventana', { type: 'integer', minimum: 0 }, false),
  'RateLimit-Reset': header('Segundos hasta que se renueva esa ventana', { type: 'integer', minimum: 1 }, false),
}

const RETRY_AFTER = header('Segundos hasta que se puede volver a intentar', { type: 'integer', minimum: 1 })
/** Only the file store's 503 carries it (the database's and Redis's outages last seconds). */
const RETRY_AFTER_STORE = header('Segundos hasta que se puede volver a intentar, cuando el almacén de archivos no está disponible', { type: 'integer', minimum: 1 }, false)

const ETAG_TEXT = 'Versión del registro entre comillas ("3"): vuelve en If-Match para modificar o eliminar esa versión'
const ETAG_SCHEMA = { type: 'string', pattern: '^"\\d+"$' }
const ETAG = header(ETAG_TEXT, ETAG_SCHEMA)
/** A read with campos that leaves out _version has no version to name (docs/decisions.md "A read with campos is a partial record"). */
const ETAG_WITH_VERSION = header(`${ETAG_TEXT}. Falta si campos no nombra _version`, ETAG_SCHEMA, false)

/** The `If-Match` request header of PUT and DELETE (generate/record-request.ts expectedVersion; another shape is a 400). */
export const IF_MATCH = {
  type: 'object',
  properties: {
    'If-Match': {
      type: 'string',
      pattern: '^ *(?:W/)?"?\\d{1,9}"? *$',
      description: 'Versión que se espera modificar ("3", la ETag de la lectura); otra versión: 409 Conflicto de versión. En un PUT, _version en el cuerpo tiene preferencia',
    },
  },
}

/** The headers of a successful answer of a route. */
export function successHeaders (options: { etag: boolean | undefined, limited: boolean }): Schema {
  return {
    ...(options.etag !== undefined && { ETag: options.etag ? ETAG : ETAG_WITH_VERSION }),
    'X-Request-Id': X_REQUEST_ID,
    ...(options.limited && RATE_LIMIT),
  }
}

/** The headers of an error answer of a status (shared by every route). */
export function errorHeaders (status: number): Schema {
  return {
    'X-Request-Id': X_REQUEST_ID,
    ...RATE_LIMIT,
    ...(status === 429 && { 'Retry-After': RETRY_AFTER }),
    // The file store down (docs/user-guide.md "Evidence files") says when to try again.
    ...(status === 503 && { 'Retry-After': RETRY_AFTER_STORE }),
  }
}
