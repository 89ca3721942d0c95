/**
 * `POST /suscripciones/{id}/reanudar` (docs/user-guide.md "Webhooks
 * (suscripciones)"): resumes a subscription paused as failing; the event
 * that failed is tried again at once, with a new retry window. Needs `editar`.
 */
import { IdParams, envelope } from '../../../http/schemas.js'
import { resumeDelivery } from '../../../records/subscriptions/subscription-admin.js'
import { idOf } from '../../record-request.js'
import type { Operation } from '../operation.js'
import { StateSchema } from './state-schema.js'

export const resumeSubscription: Operation = {
  method: 'POST',
  url: '/:id/reanudar',
  action: 'editar',
  schema: (_mod, { tags }) => ({
    openapi: { errors: [403] },
    schema: {
      tags,
      operationId: 'reanudarSuscripcion',
      summary: 'Reanudar una suscripción pausada por fallos',
      description: 'El evento que falló se intenta de nuevo enseguida, con un nuevo plazo de reintentos. Requiere `suscripciones.editar`.',
      params: IdParams,
      response: { 200: envelope(StateSchema) },
    },
  }),
  async handle (request, _reply, mod) {
    const state = await resumeDelivery(request.records.of(mod), request.em, idOf(request), request.server.config.timeZone)
    request.server.webhooks.announce()
    return { success: true, data: state }
  },
}
