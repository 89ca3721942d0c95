/**
 * The response headers the OpenAPI document declares (docs/user-guide.md
 * "API explorer and OpenAPI document"), as the service sends them:
 * `X-Request-Id` on every answer (app.ts), `RateLimit-*` on every counted
 * route (http/rate-limit.ts; not /health, not /ready, and not for an
 * address of RATE_LIMIT_IP_EXEMPT without a token, hence not required),
 * `Retry-After` on a 429, on the 409 of a repeat whose first request
 * still runs and on the 503 of a dependency that is down, `ETag` on an answer that
 * carries one record (generate/record-request.ts), `Idempotent-Replayed`
 * on a repeat's answer (http/idempotency-key.ts).
 */
type Schema = Record<string, unknown>

const header = (description: string, schema: Schema, required = true): Schema => ({ description, required, schema })

const X_REQUEST_ID = header('Id de la petición: el X-Request-Id enviado (1 a 64 letras, cifras, _ . -) o uno nuevo; aparece en los registros del servicio', { type: 'string', pattern: '^[\\w.-]{1,64}$' })

const RATE_LIMIT = {
  'RateLimit-Limit': header('Peticiones que admite la ventana que cuenta esta petición: la del token con un token válido; la de la IP sin él', { type: 'integer', minimum: 0 }, false),
  'RateLimit-Remaining': header('Peticiones que quedan en esa ventana', { type: 'integer', minimum: 0 }, false),
  'RateLimit-Reset': header('Segundos hasta que se renueva esa ventana', { type: 'integer', minimum: 1 }, false),
}

const RETRY_AFTER = header('Segundos hasta que se puede volver a intentar', { type: 'integer', minimum: 1 })
/** A dependency down (PostgreSQL, Redis, the file store) says when to try again; a 503 of a closing instance may not. */
const RETRY_AFTER_UNAVAILABLE = header('Segundos hasta que conviene volver a intentarlo (base de datos, Redis o almacén de archivos no disponibles)', { type: 'integer', minimum: 1 }, false)
const RETRY_AFTER_RUNNING = header('Con PETICION_EN_CURSO: segundos hasta que conviene repetir la petición', { type: 'integer', minimum: 1 }, false)

/** The `Idempotency-Key` request header of creates and imports (http/idempotency-key.ts). */
export const IDEMPOTENCY_KEY = {
  'Idempotency-Key': {
    type: 'string',
    pattern: '^[\\x20-\\x7E]{1,255}$',
    description: 'Clave única de esta petición (1 a 255 caracteres ASCII imprimibles; un UUID sirve), para repetirla sin escribir dos veces: durante 24 h, la misma clave con el mismo cuerpo responde la primera respuesta; con otro cuerpo o en otra ruta, 422; mientras la primera sigue en curso, 409 con Retry-After. Cada usuario tiene sus claves',
  },
}

/** The success header of a repeat answered with the first answer. */
export const IDEMPOTENT_REPLAYED = {
  'Idempotent-Replayed': header('true: esta es la respuesta guardada de la primera petición con esta Idempotency-Key; no se escribió nada', { type: 'string', enum: ['true'] }, false),
}

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
    ...(status === 409 && { 'Retry-After': RETRY_AFTER_RUNNING }),
    ...(status === 503 && { 'Retry-After': RETRY_AFTER_UNAVAILABLE }),
  }
}
