/**
 * The lifecycle routes of a module (docs/user-guide.md "Concurrency, delete and restore"; docs/operator-guide.md "History and verification"): restore a
 * soft-deleted record, list its versions, verify its hash chain. History and
 * verification work on deleted records too, for callers who may see deleted
 * records (`eliminar`): an audit does not end with a deletion.
 */
import type { FastifyInstance } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import type { ModuleDef } from '../core/registry/types.js'
import { IdParams, envelope } from '../http/schemas.js'
import { etag, idOf } from './record-request.js'
import type { OperationVerb } from './operation-names.js'

export interface LifecycleDeps {
  tags: string[]
  recordRef: TSchema
  /** The operationId of one of the module's operations (generate/operation-names.ts). */
  operationId: (verb: OperationVerb) => string
}

export function lifecycleRoutes (app: FastifyInstance, mod: ModuleDef, { tags, recordRef, operationId }: LifecycleDeps): void {
  app.post('/:id/restaurar', {
    config: { action: 'eliminar' },
    schema: { tags, summary: `Restaurar un registro eliminado de ${mod.label}`, operationId: operationId('restore'), params: IdParams, response: { 200: envelope(recordRef) } },
  }, async (request, reply) => {
    const record = await request.records.of(mod).restore(idOf(request))
    void reply.header('etag', etag(record))
    return { success: true, data: record }
  })

  app.get('/:id/historial', {
    config: { action: 'ver' },
    schema: {
      tags,
      summary: `Versiones de un registro de ${mod.label}`,
      operationId: operationId('history'),
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
            sello: Type.Integer({ description: 'Formato del sello de _hash (1, 2 o 3; docs/operator-guide.md, "The hash chain")' }),
            campos_sellados: Type.Optional(Type.Array(Type.String(), { description: 'Formato 1: campos que entraron en _hash, también los nulos' })),
            registro: recordRef,
          })),
        })),
      },
    },
  }, async (request) => {
    return { success: true, data: { versiones: await request.records.of(mod).history(idOf(request)) } }
  })

  app.get('/:id/verificar', {
    config: { action: 'ver' },
    schema: {
      tags,
      summary: `Verificar la cadena de integridad de un registro de ${mod.label}`,
      operationId: operationId('verify'),
      params: IdParams,
      response: {
        200: envelope(Type.Object({
          valido: Type.Boolean(),
          version_rota: Type.Optional(Type.Integer({ description: 'Primera versión que no se sostiene, cuando se sabe' })),
          motivo: Type.Optional(Type.String({ description: 'Qué no se sostiene (docs/operator-guide.md, "History and verification"); junto a valido true, un aviso: un punto de control ilegible' })),
        })),
      },
    },
  }, async (request) => {
    return { success: true, data: await request.records.of(mod).verify(idOf(request)) }
  })
}
