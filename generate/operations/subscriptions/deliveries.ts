/**
 * `GET /suscripciones/{id}/entregas` (docs/user-guide.md "Webhooks
 * (suscripciones)"): the subscription's delivery state and its attempts,
 * newest first (`limit`, `offset`). Needs `ver`.
 */
import { Type } from '@sinclair/typebox'
import { IdParams, envelope } from '../../../http/schemas.js'
import { deliveries } from '../../../records/subscriptions/subscription-admin.js'
import { idOf } from '../../record-request.js'
import type { Operation } from '../operation.js'
import { StateSchema } from './state-schema.js'

const Attempt = Type.Object({
  fecha: Type.String({ description: 'Cuándo se hizo el intento' }),
  posicion: Type.Integer({ description: 'Posición del evento en el flujo' }),
  estado: Type.Union([Type.Integer(), Type.Null()], { description: 'Código HTTP respondido; null si no hubo respuesta' }),
  latencia_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  resultado: Type.String({ enum: ['entregado', 'reintento', 'descartado', 'pausada'] }),
})

export const subscriptionDeliveries: Operation = {
  method: 'GET',
  url: '/:id/entregas',
  action: 'ver',
  schema: (_mod, { tags }) => ({
    openapi: { querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, default: 100 })), offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })) }) },
    schema: {
      tags,
      operationId: 'entregasSuscripcion',
      summary: 'Estado de entrega e intentos de una suscripción',
      description: 'Cada intento de entrega (fecha, posición, código HTTP, latencia, error, resultado), del más reciente al más antiguo, y el estado de la suscripción (posición entregada, pausada por fallos, próximo intento).',
      params: IdParams,
      response: { 200: envelope(Type.Object({ estado: StateSchema, entregas: Type.Array(Attempt), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) },
    },
  }),
  async handle (request, _reply, mod) {
    const query = request.query as Record<string, string | string[] | undefined>
    return { success: true, data: await deliveries(request.records.of(mod), request.em, idOf(request), query, request.server.config.timeZone) }
  },
}
