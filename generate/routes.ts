/**
 * The encapsulated route plugin of one module, registered under
 * `/{module.path}`: list, read, create, update and soft delete, generated
 * from the declaration. No module has hand-written route code.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError, MESSAGES } from '../core/errors.js'
import { nowSeconds } from '../core/time.js'
import type { Action, ModuleDef } from '../core/registry/types.js'
import { IdParams, buildSchemas, envelope } from './schemas.js'
import { parseListQuery } from '../records/list-query.js'
import { createRecordService } from '../records/record-service.js'
import { toApiRecord, type ViewContext } from '../records/record-view.js'
import type { Row } from '../db/module-entity.js'
import { logReads } from '../records/read-log.js'
import { lifecycleRoutes } from './lifecycle-routes.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Permission action a route needs on its module. */
    action?: Action
    /** Route needs no token. */
    public?: boolean
    /** false: not rate limited and no RateLimit headers (/health, /ready). */
    rateLimit?: boolean
  }
}

const Message = envelope(Type.Object({ message: Type.String() }))

/** `_version` from the body, else the `If-Match` header; undefined when neither is sent. */
function expectedVersion (request: FastifyRequest): number | undefined {
  const body = request.body as Record<string, unknown> | undefined
  if (body !== undefined && body !== null && '_version' in body) {
    const v = body._version
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new AppError('DATOS_INVALIDOS', [{ campo: '_version', mensaje: 'debe ser un número entero positivo' }])
    return v
  }
  const header = request.headers['if-match']
  if (header === undefined) return undefined
  const m = /^(?:W\/)?"?(\d{1,9})"?$/.exec(header.trim())
  if (m === null) throw new AppError('DATOS_INVALIDOS', [{ campo: 'If-Match', mensaje: 'debe ser "<versión>"' }])
  return Number(m[1])
}

export function moduleRoutes (mod: ModuleDef) {
  return async function routes (app: FastifyInstance): Promise<void> {
    const schemas = buildSchemas(mod, app.registry)
    app.addSchema(schemas.record)
    const RecordRef = Type.Ref(schemas.record)
    const service = createRecordService(mod, {
      registry: app.registry,
      sequences: app.stores.sequences,
      cipher: app.cipher,
      timeZone: app.config.timeZone,
      ...(app.moduleHooks.has(mod.name) && { hooks: app.moduleHooks.get(mod.name)! }),
    })
    const can = (request: FastifyRequest, action: Action): boolean => app.permissions.can(request.caller.rol, mod.name, action)
    const encrypted = mod.fields.filter((f) => f.encrypted)
    /**
     * API records of stored rows, decrypted or masked for the caller. When
     * decrypted values leave, the read is logged first (SPEC S7).
     */
    const views = async (request: FastifyRequest, rows: Row[]): Promise<Array<Record<string, unknown>>> => {
      const canDecrypt = encrypted.length > 0 && can(request, 'descifrar')
      const ctx: ViewContext = { timeZone: app.config.timeZone, cipher: app.cipher, canDecrypt }
      const out = rows.map((r) => toApiRecord(mod, r, ctx))
      if (canDecrypt) {
        const fecha = nowSeconds()
        const ruta = `${request.method} ${request.routeOptions.url ?? request.url}`
        const entries = out.flatMap((rec) => {
          const campos = encrypted.map((f) => f.name).filter((name) => rec[name] !== null && rec[name] !== undefined)
          return campos.length === 0 ? [] : [{ usuario: request.caller.id, fecha, modulo: mod.name, registro: rec._id as string, campos, ruta }]
        })
        await logReads(request.em, entries)
      }
      return out
    }
    const view = async (request: FastifyRequest, row: Row): Promise<Record<string, unknown>> => (await views(request, [row]))[0]!
    const tags = [mod.label]

    // Permission before validation (SPEC S9 order): onRequest runs before the body is parsed.
    app.addHook('onRequest', async (request) => {
      const action = request.routeOptions.config.action
      if (action !== undefined && !can(request, action)) throw new AppError('SIN_PERMISOS')
    })
    app.addHook('preValidation', async (request) => {
      if (request.routeOptions.schema?.body !== undefined && (request.body === undefined || request.body === null)) {
        throw new AppError('DATOS_REQUERIDOS')
      }
    })

    app.get('/', {
      config: { action: 'ver' },
      schema: { tags, summary: `Listar ${mod.label}`, response: { 200: envelope(Type.Object({ records: Type.Array(RecordRef), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) } },
    }, async (request) => {
      const q = parseListQuery(mod, request.query as Record<string, string | string[]>, app.config.timeZone, app.cipher)
      if (q.includeDeleted && !can(request, 'eliminar')) throw new AppError('SIN_PERMISOS')
      if (q.filtersEncrypted && !can(request, 'descifrar')) throw new AppError('SIN_PERMISOS')
      const { rows, total } = await service.list(request.em, q)
      return { success: true, data: { records: await views(request, rows), total, limit: q.limit, offset: q.offset } }
    })

    app.get('/:id', {
      config: { action: 'ver' },
      schema: { tags, summary: `Obtener un registro de ${mod.label}`, params: IdParams, response: { 200: envelope(RecordRef) } },
    }, async (request, reply: FastifyReply) => {
      const row = await service.get(request.em, (request.params as { id: string }).id)
      void reply.header('etag', `"${String(row._version)}"`)
      return { success: true, data: await view(request, row) }
    })

    app.post('/', {
      config: { action: 'crear' },
      schema: { tags, summary: `Crear un registro de ${mod.label}`, body: schemas.create, response: { 201: envelope(RecordRef) } },
    }, async (request, reply) => {
      const row = await service.create(request.em, request.caller, request.body as Record<string, unknown>)
      void reply.code(201).header('etag', `"1"`)
      return { success: true, data: await view(request, row) }
    })

    app.put('/:id', {
      config: { action: 'editar' },
      schema: { tags, summary: `Modificar un registro de ${mod.label}`, params: IdParams, body: schemas.update, response: { 200: envelope(RecordRef) } },
    }, async (request, reply) => {
      const body = request.body as Record<string, unknown>
      if (!Object.keys(body).some((k) => !k.startsWith('_'))) throw new AppError('DATOS_REQUERIDOS')
      const version = expectedVersion(request)
      const row = await service.update(request.em, request.caller, (request.params as { id: string }).id, body, version)
      void reply.header('etag', `"${String(row._version)}"`)
      return { success: true, data: await view(request, row) }
    })

    lifecycleRoutes(app, mod, { service, views, can, tags, recordRef: RecordRef })

    app.delete('/:id', {
      config: { action: 'eliminar' },
      schema: { tags, summary: `Eliminar (borrado lógico) un registro de ${mod.label}`, params: IdParams, response: { 200: Message } },
    }, async (request) => {
      await service.remove(request.em, request.caller, (request.params as { id: string }).id, expectedVersion(request))
      return { success: true, data: { message: MESSAGES.REGISTRO_ELIMINADO } }
    })
  }
}
