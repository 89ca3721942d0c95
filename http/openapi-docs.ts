/**
 * What the OpenAPI document says beyond the route schemas (docs/user-guide.md "API explorer and OpenAPI document"), so a
 * generated client is complete: an `operationId` per route (a route that
 * names none gets one from its method and path), `security: []` on the
 * routes that need no token, the error responses (docs/user-guide.md "Errors") each route can give
 * (read from its config: token, rate limit, permission, body, path id, plus
 * what it declares), and documentation-only parts a route hands over in
 * `config.openapi` (list query parameters the service parses itself, a body
 * schema stricter than the one validation uses). Used by plugins/openapi.ts
 * as @fastify/swagger's `transform` and `transformObject`; changes nothing
 * at run time.
 */
import type { FastifySchema, RouteOptions } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { ERRORS } from '../core/errors.js'
import { errorHeaders, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, successHeaders } from './openapi-headers.js'
import './route-config.js'

/** Documentation-only parts of a route (`config.openapi`). */
export interface RouteDocs {
  /** Query parameters (a JSON object schema), documented only: the handler parses and checks them itself. */
  querystring?: object
  /** The body as documented (a JSON schema), when it says more than the validating schema. */
  body?: object
  /** Path parameters as documented (an id's pattern), when they say more than the validating schema. */
  params?: object
  /** Request headers, documented only (If-Match): the handler reads them itself. */
  headers?: object
  /** The 200 answer as documented, when it says more than the serializing schema (a read with campos). */
  answer?: object
  /** The successful answer carries the record's ETag; `'with-version'`: only when the answer holds `_version` (campos). */
  etag?: boolean | 'with-version'
  /** Headers a successful answer may carry beyond the shared ones (the login's Set-Cookie), as OpenAPI header objects. */
  successHeaders?: Record<string, object>
  /** Error statuses the route gives beyond those its config implies (409, a 401 of a public route …). */
  errors?: readonly number[]
  /** An operation every module has (generate/operations/): listed after the other routes (documentObject). */
  everyModule?: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Documentation-only parts of the route (http/openapi-docs.ts). */
    openapi?: RouteDocs
  }
  interface FastifyInstance {
    /** Components the document shows instead of the schema of the same name (a record with its `required` list). */
    openapiSchemas: Map<string, TSchema>
  }
}

type Schema = Record<string, unknown>

/** `get /usuarios/:id/cerrar-sesiones` → `getUsuariosIdCerrarSesiones`. */
export function operationIdOf (method: string, url: string): string {
  const words = url.split(/[^A-Za-z0-9]+/).filter((w) => w !== '')
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
}

/** The error texts (docs/user-guide.md "Errors") of one status, in the order of core/errors.ts. */
function textsOf (status: number): string[] {
  return Object.values(ERRORS).filter((e) => e.status === status).map((e) => e.message)
}

/** The machine codes (`codigo`) of one status, in the same order. */
function codesOf (status: number): string[] {
  return Object.entries(ERRORS).filter(([, e]) => e.status === status).map(([code]) => code)
}

/**
 * What `detalles` is sent with (core/errors.ts): validation, a duplicate or
 * a transition, an import's row limit, an uploaded file whose content
 * contradicts its type (docs/user-guide.md "Evidence files"), a user's
 * streams at their limit, a store named down.
 */
export const DETAIL_STATUSES: readonly number[] = [400, 409, 413, 415, 429, 503]

const DETALLES = {
  type: 'array',
  description: 'Qué falló, campo a campo (a lo sumo 20)',
  items: {
    type: 'object',
    required: ['campo', 'mensaje'],
    additionalProperties: false,
    properties: { campo: { type: 'string' }, mensaje: { type: 'string' } },
  },
}

const ERROR_REF = '#/components/schemas/Error'

/** The one error envelope (docs/user-guide.md "Errors") every error status shares, `components.schemas.Error`. */
export function sharedErrorSchema (): Schema {
  return {
    type: 'object',
    required: ['success', 'error', 'codigo'],
    additionalProperties: false,
    properties: {
      success: { type: 'boolean', enum: [false] },
      error: { type: 'string', description: 'Texto del error, en español' },
      codigo: { type: 'string', enum: Object.keys(ERRORS), description: 'Código estable del error (core/errors.ts); el texto de `error` puede cambiar, este no' },
      detalles: { ...DETALLES, description: `${DETALLES.description}; con los estados ${DETAIL_STATUSES.join(', ')}` },
    },
    examples: [{ success: false, error: ERRORS.DATOS_INVALIDOS.message, codigo: 'DATOS_INVALIDOS', detalles: [{ campo: 'fecha_hechos', mensaje: 'no es una fecha y hora válida' }] }],
  }
}

/** The error envelope of a status: the shared one, narrowed to the texts and codes of that status. */
export function errorSchema (status: number): Schema {
  return {
    description: textsOf(status).join(' · '),
    allOf: [{ $ref: ERROR_REF }],
    properties: {
      error: { enum: textsOf(status) },
      codigo: { enum: codesOf(status) },
      // A status that never sends `detalles` says so.
      ...(!DETAIL_STATUSES.includes(status) && { detalles: false }),
    },
  }
}

/** The error statuses a route can answer with. */
function errorStatuses (route: RouteOptions, documented: FastifySchema): number[] {
  const config = route.config ?? {}
  // Any route can fail unexpectedly, any request can bring a request line
  // and headers past Node's 16 KiB (a list sent every parameter it
  // declares): 431, or arrive too slowly: 408; both answered before routing
  // (http/client-error.ts, docs/user-guide.md "Errors").
  const s = new Set<number>([...(config.openapi?.errors ?? []), 408, 431, 500])
  // Any request that may carry a body has it parsed (plugins/json-body.ts): JSON only, within 1 MiB, well formed.
  const method = Array.isArray(route.method) ? route.method[0]! : route.method
  if (documented.body !== undefined || !['GET', 'HEAD'].includes(method)) [400, 413, 415].forEach((n) => s.add(n))
  if (documented.querystring !== undefined) s.add(400)
  if (config.public !== true) s.add(401)
  if (config.action !== undefined) s.add(403)
  // A repeat while the first runs, a key reused for another request (http/idempotency-key.ts).
  if (config.idempotencyKey === true) [409, 422].forEach((n) => s.add(n))
  if (route.url.includes(':')) s.add(404)
  // Counting a request needs the stores (Redis): down, it is a 503. A
  // window of its own is counted in memory.
  if (config.rateLimit === undefined) [429, 503].forEach((n) => s.add(n))
  else if (config.rateLimit !== false) s.add(429)
  return [...s].sort((a, b) => a - b)
}

/**
 * @fastify/swagger `transform`: one route's schema as the document shows it.
 * The operationId of an operation every module has is added to `everyModule`.
 */
export function documentRoute ({ schema, url, route }: { schema: FastifySchema | undefined, url: string, route: RouteOptions }, notes: DocumentNotes = newNotes()): { schema: FastifySchema, url: string } {
  const docs = route.config?.openapi ?? {}
  const documented: FastifySchema = { ...schema }
  if (documented.hide === true) return { schema: documented, url }
  if (docs.querystring !== undefined) documented.querystring = docs.querystring
  if (docs.body !== undefined) documented.body = docs.body
  if (docs.params !== undefined) documented.params = docs.params
  if (docs.headers !== undefined) documented.headers = docs.headers
  const idempotent = route.config?.idempotencyKey === true
  if (idempotent) documented.headers = { type: 'object', ...docs.headers, properties: { ...(docs.headers as { properties?: object } | undefined)?.properties, ...IDEMPOTENCY_KEY } }
  const method = Array.isArray(route.method) ? route.method[0]! : route.method
  documented.operationId ??= operationIdOf(method, url)
  if (docs.everyModule === true) notes.everyModule.add(documented.operationId)
  if (docs.etag !== undefined && docs.etag !== false) notes.etag.set(documented.operationId, docs.etag === true)
  if (route.config?.rateLimit !== undefined) notes.unlimited.add(documented.operationId)
  if (docs.successHeaders !== undefined || idempotent) notes.headers.set(documented.operationId, { ...docs.successHeaders, ...(idempotent && IDEMPOTENT_REPLAYED) })
  if (route.config?.public === true) documented.security = []
  const errors = Object.fromEntries(errorStatuses(route, documented).map((n) => [n, errorSchema(n)]))
  documented.response = { ...(schema?.response as Schema | undefined), ...(docs.answer !== undefined && { 200: docs.answer }), ...errors }
  return { schema: documented, url }
}

/** The shared error responses, with their headers (http/openapi-headers.ts). */
function errorResponse (status: number): Schema {
  const { description, ...schema } = errorSchema(status)
  return { description, headers: errorHeaders(status), content: { 'application/json': { schema } } }
}

/**
 * What documentRoute notes of each operation for documentObject, by
 * operationId: the operations every module has, those answering an ETag,
 * those outside the normal rate limits (/health, /ready).
 */
export interface DocumentNotes {
  readonly everyModule: Set<string>
  /** Whether the ETag is always sent, by operationId. */
  readonly etag: Map<string, boolean>
  readonly unlimited: Set<string>
  /** A route's own success headers (RouteDocs.successHeaders), by operationId. */
  readonly headers: Map<string, Record<string, object>>
}

export const newNotes = (): DocumentNotes => ({ everyModule: new Set(), etag: new Map(), unlimited: new Set(), headers: new Map() })

const REF = '#/components/responses/'

/** The key of an object query parameter's schema naming the component it is shared as (generate/any-of-parameter.ts). */
export const GROUP_SCHEMA = 'x-componente'

/**
 * An object query parameter (an any-of group `o[N]`, docs/user-guide.md
 * "Any-of filters (o[N])") is sent as JSON text: `content:
 * application/json` instead of a schema, which OpenAPI defines for any
 * depth where `deepObject` stops at one level. @fastify/swagger writes
 * every query parameter with a schema.
 */
function jsonParameters (op: Schema, components: Record<string, Schema>): void {
  for (const p of (op.parameters ?? []) as Schema[]) {
    const schema = p.schema as Schema | undefined
    if (p.in !== 'query' || schema?.type !== 'object') continue
    const { description, examples, [GROUP_SCHEMA]: component, ...rest } = schema
    // The nine groups of a list share one component (generate/any-of-parameter.ts).
    if (typeof component === 'string') components[component] ??= rest
    delete p.schema
    delete p.style
    delete p.explode
    Object.assign(p, {
      ...(typeof description === 'string' && { description }),
      content: { 'application/json': {
        schema: typeof component === 'string' ? { $ref: `#/components/schemas/${component}` } : rest,
        ...(Array.isArray(examples) && examples.length > 0 && { example: examples[0] }),
      } },
    })
  }
}

/**
 * The paths of the operations every module has (their operationIds in
 * `everyModule`) after the others, each group in the order its routes were
 * added: the hand-written routes and the modules' own operations first,
 * then each module's generated ones. A module's own operation is added by
 * that module's plugin, among the generated ones (generate/operations/index.ts);
 * listed with the hand-written routes, it is found where it always was.
 */
function ordered (paths: Record<string, Record<string, Schema>>, everyModule: ReadonlySet<string>): Record<string, Record<string, Schema>> {
  const entries = Object.entries(paths)
  const generated = ([, item]: [string, Record<string, Schema>]): boolean => Object.values(item).some((op) => everyModule.has(op.operationId as string))
  return Object.fromEntries([...entries.filter((e) => !generated(e)), ...entries.filter(generated)])
}

/**
 * @fastify/swagger `transformObject`: every error response becomes a
 * reference to one shared response per status, the components the
 * routes documented (`app.openapiSchemas`) replace their namesakes, and the
 * paths are `ordered`.
 */
export function documentObject (doc: Schema, schemas: ReadonlyMap<string, TSchema>, notes: DocumentNotes = newNotes()): Schema {
  const used = new Set<number>()
  const groups: Record<string, Schema> = {}
  doc.paths = ordered((doc.paths ?? {}) as Record<string, Record<string, Schema>>, notes.everyModule)
  for (const item of Object.values(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const op of Object.values(item)) {
      jsonParameters(op, groups)
      const responses = op.responses as Record<string, Schema> | undefined
      const id = op.operationId as string
      for (const code of Object.keys(responses ?? {})) {
        const status = Number(code)
        if (status < 400) {
          responses![code] = { ...responses![code], headers: { ...successHeaders({ etag: notes.etag.get(id), limited: !notes.unlimited.has(id) }), ...notes.headers.get(id) } }
          continue
        }
        used.add(status)
        responses![code] = { $ref: `${REF}Error${status}` }
      }
    }
  }
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown>>
  components.responses = Object.fromEntries([...used].sort((a, b) => a - b).map((n) => [`Error${n}`, errorResponse(n)]))
  components.schemas ??= {}
  components.schemas.Error = sharedErrorSchema()
  Object.assign(components.schemas, groups)
  for (const [name, schema] of schemas) {
    const { $id: _id, ...plain } = JSON.parse(JSON.stringify(schema)) as Schema
    components.schemas[name] = plain
  }
  doc.components = components
  return doc
}
