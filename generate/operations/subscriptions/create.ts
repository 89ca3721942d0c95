/**
 * `POST /suscripciones` (docs/user-guide.md "Webhooks (suscripciones)"): the
 * create of every module, and when no `secreto` is sent one is generated
 * and shown in this answer only (`data.secreto`); it is never shown again.
 */
import { Type } from '@sinclair/typebox'
import { envelope } from '../../../http/schemas.js'
import { generateSecret } from '../../../records/subscriptions/subscriptions-policy.js'
import { etag } from '../../record-request.js'
import type { Operation } from '../operation.js'

export const createSubscription: Operation = {
  method: 'POST',
  url: '/',
  action: 'crear',
  config: { idempotencyKey: true },
  schema: (mod, { schemas, recordRef, tags, operationId }) => ({
    openapi: { body: schemas.doc.create, errors: [409], etag: true },
    schema: {
      tags,
      summary: `Crear un registro de ${mod.label}`,
      description: 'Sin `secreto`, se genera uno y se muestra solo en esta respuesta (`secreto`); nunca más se devuelve.',
      operationId: operationId('create'),
      body: schemas.create,
      response: { 201: envelope(Type.Intersect([recordRef, Type.Object({ secreto: Type.Optional(Type.String({ description: 'El secreto de firma generado (solo en esta respuesta)' })) })])) },
    },
  }),
  async handle (request, reply, mod) {
    const body = request.body as Record<string, unknown>
    const generated = typeof body.secreto === 'string' ? undefined : generateSecret()
    const record = await request.records.of(mod).create(generated === undefined ? body : { ...body, secreto: generated })
    void reply.code(201).header('etag', etag(record))
    return { success: true, data: generated === undefined ? record : { ...record, secreto: generated } }
  },
}
