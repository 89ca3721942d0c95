/**
 * The encapsulated route plugin of one module, registered under
 * `/{module.path}`: the module's schemas, the hooks its routes share, and
 * its operations (generate/operations/: those every module has, then the
 * module's own). Each handler is a call to the caller's records service and
 * a serialisation; it decides no permission (the service does, asked
 * before validation for the docs/user-guide.md "Errors" order).
 */
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import '../http/route-config.js'
import { appendRouteHook } from '../http/route-hooks.js'
import { withIdempotencyKey, type Handler } from '../http/idempotency-key.js'
import { buildSchemas } from './schemas.js'
import { FILE_ITEM, fileItemSchema } from './read-schemas.js'
import { idPattern } from './field-formats.js'
import { IdParams } from '../http/schemas.js'
import { operationName } from './operation-names.js'
import { commonOperations, ownOperations } from './operations/index.js'
import type { Operation, OperationContext } from './operations/operation.js'

export function moduleRoutes (mod: ModuleDef) {
  return async function routes (app: FastifyInstance): Promise<void> {
    const schemas = buildSchemas(mod, app.registry, app.config.timeZone)
    app.addSchema(schemas.record)
    app.openapiSchemas.set(schemas.record.$id!, schemas.doc.record)
    app.addSchema(schemas.partial)
    app.openapiSchemas.set(schemas.partial.$id!, schemas.doc.partial)
    // A read is the whole record, with expandir the expanded one (modules with refs), or with campos a partial one (generate/read-schemas.ts).
    const refs = mod.fields.some((f) => f.type === 'ref')
    if (refs) {
      app.addSchema(schemas.expanded)
      app.openapiSchemas.set(schemas.expanded.$id!, schemas.doc.expanded)
    }
    if (mod.fields.some((f) => f.type === 'file')) app.openapiSchemas.set(FILE_ITEM, fileItemSchema(app.config.timeZone))
    const recordRef = Type.Ref(schemas.record)
    const readRef = Type.Union([recordRef, ...(refs ? [Type.Ref(schemas.expanded)] : []), Type.Ref(schemas.partial)])
    const ctx: OperationContext = { registry: app.registry, timeZone: app.config.timeZone, schemas, recordRef, readRef, tags: [mod.label], operationId: operationName(mod) }

    // The action at all, before the body is parsed and validated (docs/user-guide.md "Errors" order: 403 before 400);
    // a route with a body refuses a request without one. Attached to the routes that need them
    // (http/route-hooks.ts). Synchronous hooks take `done` (no promise per request); Fastify
    // answers what they throw.
    app.addHook('onRoute', (route) => {
      const action = route.config?.action
      if (action !== undefined) {
        appendRouteHook(route, 'onRequest', (request, _reply, done) => {
          request.records.of(mod).authorize(action)
          done()
        })
      }
      if (route.schema?.body !== undefined) {
        appendRouteHook(route, 'preValidation', (request, _reply, done) => {
          done(request.body === undefined || request.body === null ? new AppError('DATOS_REQUERIDOS') : undefined)
        })
      }
    })

    // The id in a path, documented with its module's pattern (validation leaves a malformed id to the 404).
    const idParams = Type.Object({ id: Type.String({ description: `Id del registro (${mod.prefix}-AAAA-NNNNN)`, pattern: idPattern(mod.prefix) }) })
    const idempotency = { store: app.stores.idempotency, cipher: app.cipher, ...app.config.idempotency }
    const register = (op: Operation, everyModule: boolean): void => {
      const { schema, openapi } = op.schema(mod, ctx)
      const handle: Handler = (request, reply) => op.handle(request, reply, mod)
      const docs = { ...openapi, ...(everyModule && { everyModule }), ...(schema.params === IdParams && { params: idParams }) }
      const route = {
        method: op.method,
        url: op.url,
        config: { ...op.config, ...(op.action !== undefined && { action: op.action }), openapi: docs },
        schema,
        handler: op.config?.idempotencyKey === true ? withIdempotencyKey(handle, idempotency) : handle,
      }
      if (op.config?.fileBody !== true) { app.route(route); return }
      // A file of any type reaches the handler as the unread request stream: a context of its own, whose one parser takes every type.
      void app.register(async (files) => {
        files.removeAllContentTypeParsers()
        files.addContentTypeParser('*', (_request, payload, done) => { done(null, payload) })
        files.route(route)
      })
    }
    for (const op of commonOperations(mod)) register(op, true)
    for (const op of ownOperations(mod, app.registry)) register(op, false)
  }
}
