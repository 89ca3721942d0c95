/**
 * `POST /suscripciones/{id}/reproducir` with `{"desde": <posición>}`
 * (docs/user-guide.md "Webhooks (suscripciones)"): delivers again every
 * event the subscription covers from that position of the feed on, in
 * order (and resumes it if paused). Needs `editar`.
 */
import { Type } from '@sinclair/typebox'
import { IdParams, envelope } from '../../../http/schemas.js'
import { replayDelivery } from '../../../records/subscriptions/subscription-admin.js'
import { idOf } from '../../record-request.js'
import type { Operation } from '../operation.js'
import { StateSchema } from './state-schema.js'

export const replaySubscription: Operation = {
  method: 'POST',
  url: '/:id/reproducir',
  action: 'editar',
  schema: (_mod, { tags }) => ({
    openapi: { errors: [403] },
    schema: {
      tags,
      operationId: 'reproducirSuscripcion',
      summary: 'Volver a entregar desde una posición del flujo',
      description: 'Entrega de nuevo, en orden, cada evento cubierto desde la posición `desde` (incluida); reanuda la suscripción si estaba pausada. Requiere `suscripciones.editar`.',
      params: IdParams,
      body: Type.Object({ desde: Type.Integer({ minimum: 1, description: 'Primera posición que se entrega de nuevo' }) }, { additionalProperties: false }),
      response: { 200: envelope(StateSchema) },
    },
  }),
  async handle (request, _reply, mod) {
    const { desde } = request.body as { desde: unknown }
    const state = await replayDelivery(request.records.of(mod), request.em, idOf(request), desde, request.server.config.timeZone)
    request.server.webhooks.announce()
    return { success: true, data: state }
  },
}
