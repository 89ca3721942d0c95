/**
 * `GET /{module}/{id}/verificar`: whether a record's hash chain holds
 * (docs/operator-guide.md "History and verification"); deleted records too,
 * for callers who may see them (`eliminar`).
 */
import { Type } from '@sinclair/typebox'
import { IdParams, envelope } from '../../http/schemas.js'
import { ErasureSummary } from '../../http/erasure-schemas.js'
import { idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const verify: Operation = {
  method: 'GET',
  url: '/:id/verificar',
  action: 'ver',
  schema: (mod, { tags, operationId }) => ({
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
          archivo: Type.Optional(Type.String({ description: 'El archivo de prueba cuyo contenido almacenado no es el sellado (alterado, cambiado o borrado)' })),
          supresiones: Type.Optional(Type.Array(ErasureSummary, { description: 'Con valido true: cada supresión de datos personales del registro, la más antigua primero' })),
        })),
      },
    },
  }),
  async handle (request, _reply, mod) {
    return { success: true, data: await request.records.of(mod).verify(idOf(request)) }
  },
}
