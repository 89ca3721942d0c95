/**
 * The lifecycle routes of a module (SPEC S5, S7): restore a soft-deleted
 * record, list its versions, verify its hash chain. They work on deleted
 * records too: an audit does not end with a deletion.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import type { Action, ModuleDef } from '../core/registry/types.js'
import { formatDateTime } from '../core/time.js'
import type { Row } from '../db/module-entity.js'
import { IdParams, envelope } from './schemas.js'
import { verifyChain } from '../records/chain.js'
import { sealInfo, versionsOf } from '../records/history.js'
import type { RecordService } from '../records/record-service.js'

export interface LifecycleDeps {
  service: RecordService
  views: (request: FastifyRequest, rows: Row[]) => Promise<Array<Record<string, unknown>>>
  can: (request: FastifyRequest, action: Action) => boolean
  tags: string[]
  recordRef: TSchema
}


export function lifecycleRoutes (app: FastifyInstance, mod: ModuleDef, deps: LifecycleDeps): void {
  const { service, views, tags, recordRef } = deps
  const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id

  app.post('/:id/restaurar', {
    config: { action: 'eliminar' },
    schema: { tags, summary: `Restaurar un registro eliminado de ${mod.label}`, params: IdParams, response: { 200: envelope(recordRef) } },
  }, async (request, reply) => {
    const row = await service.restore(request.em, request.caller, idOf(request))
    void reply.header('etag', `"${String(row._version)}"`)
    return { success: true, data: (await views(request, [row]))[0] }
  })

  app.get('/:id/historial', {
    config: { action: 'ver' },
    schema: {
      tags,
      summary: `Versiones de un registro de ${mod.label}`,
      params: IdParams,
      response: {
        200: envelope(Type.Object({
          versiones: Type.Array(Type.Object({
            _version: Type.Integer(),
            accion: Type.String({ enum: ['crear', 'editar', 'eliminar', 'restaurar'] }),
            usuario: Type.String(),
            fecha: Type.String(),
            _hash: Type.String(),
            campos: Type.Array(Type.String(), { description: 'Campos cuyo valor cambió en esta versión' }),
            sello: Type.Integer({ description: 'Formato del sello de _hash (1 o 2; README, "The hash chain")' }),
            campos_sellados: Type.Optional(Type.Array(Type.String(), { description: 'Formato 1: campos que entraron en _hash, también los nulos' })),
            registro: recordRef,
          })),
        })),
      },
    },
  }, async (request) => {
    const live = await service.findAny(request.em, idOf(request))
    const versions = await versionsOf(request.em, mod, live._id as string)
    const records = await views(request, versions.map((v) => v.datos))
    return {
      success: true,
      data: {
        versiones: versions.map((v, i) => ({
          _version: v.version,
          accion: v.accion,
          usuario: v.usuario,
          fecha: formatDateTime(new Date(v.fecha), app.config.timeZone),
          _hash: v.hash,
          campos: v.campos,
          ...sealInfo(mod, v),
          registro: records[i],
        })),
      },
    }
  })

  app.get('/:id/verificar', {
    config: { action: 'ver' },
    schema: {
      tags,
      summary: `Verificar la cadena de integridad de un registro de ${mod.label}`,
      params: IdParams,
      response: { 200: envelope(Type.Object({ valido: Type.Boolean(), version_rota: Type.Optional(Type.Integer()) })) },
    },
  }, async (request) => {
    const live = await service.findAny(request.em, idOf(request))
    return { success: true, data: await verifyChain(request.em, mod, live, app.cipher) }
  })
}
