/**
 * The encapsulated route plugin of one module, registered under
 * `/{module.path}`: list, read, create, update, soft delete, restore,
 * history and verification, generated from the declaration. Each handler is
 * a call to the caller's records service and a serialisation; it decides no
 * permission (the service does, asked before validation for the S9 order).
 */
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError, MESSAGES } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import '../http/route-config.js'
import { appendRouteHook } from '../http/route-hooks.js'
import { IdParams, Message, envelope } from '../http/schemas.js'
import { buildSchemas } from './schemas.js'
import { listQuerystring } from './list-parameters.js'
import { operationName } from './operation-names.js'
import { lifecycleRoutes } from './lifecycle-routes.js'
import { etag, expectedVersion, idOf } from './record-request.js'

export function moduleRoutes (mod: ModuleDef) {
  return async function routes (app: FastifyInstance): Promise<void> {
    const schemas = buildSchemas(mod, app.registry)
    app.addSchema(schemas.record)
    app.openapiSchemas.set(schemas.record.$id!, schemas.doc.record)
    const RecordRef = Type.Ref(schemas.record)
    const tags = [mod.label]
    const op = operationName(mod)

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

    app.get('/', {
      config: { action: 'ver', openapi: { querystring: listQuerystring(mod, app.registry) } },
      schema: { tags, summary: `Listar ${mod.label}`, operationId: op('list'), response: { 200: envelope(Type.Object({ records: Type.Array(RecordRef), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) } },
    }, async (request) => {
      return { success: true, data: await request.records.of(mod).list(request.query as Record<string, string | string[]>) }
    })

    app.get('/:id', {
      config: { action: 'ver' },
      schema: { tags, summary: `Obtener un registro de ${mod.label}`, operationId: op('get'), params: IdParams, response: { 200: envelope(RecordRef) } },
    }, async (request, reply) => {
      const record = await request.records.of(mod).get(idOf(request))
      void reply.header('etag', etag(record))
      return { success: true, data: record }
    })

    app.post('/', {
      config: { action: 'crear', openapi: { body: schemas.doc.create, errors: [409] } },
      schema: { tags, summary: `Crear un registro de ${mod.label}`, operationId: op('create'), body: schemas.create, response: { 201: envelope(RecordRef) } },
    }, async (request, reply) => {
      const record = await request.records.of(mod).create(request.body as Record<string, unknown>)
      void reply.code(201).header('etag', etag(record))
      return { success: true, data: record }
    })

    app.put('/:id', {
      config: { action: 'editar', openapi: { body: schemas.doc.update, errors: [409] } },
      schema: { tags, summary: `Modificar un registro de ${mod.label}`, operationId: op('update'), params: IdParams, body: schemas.update, response: { 200: envelope(RecordRef) } },
    }, async (request, reply) => {
      const body = request.body as Record<string, unknown>
      if (!Object.keys(body).some((k) => !k.startsWith('_'))) throw new AppError('DATOS_REQUERIDOS')
      const record = await request.records.of(mod).update(idOf(request), body, expectedVersion(request))
      void reply.header('etag', etag(record))
      return { success: true, data: record }
    })

    lifecycleRoutes(app, mod, { tags, recordRef: RecordRef, operationId: op })

    app.delete('/:id', {
      config: { action: 'eliminar', openapi: { errors: [409] } },
      schema: { tags, summary: `Eliminar (borrado lógico) un registro de ${mod.label}`, operationId: op('delete'), params: IdParams, response: { 200: Message } },
    }, async (request) => {
      await request.records.of(mod).remove(idOf(request), expectedVersion(request))
      return { success: true, data: { message: MESSAGES.REGISTRO_ELIMINADO } }
    })
  }
}
