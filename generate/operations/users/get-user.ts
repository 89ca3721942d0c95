/**
 * `GET /usuarios/{id}`: a user as every module's `get` answers a record,
 * with the login lock-out's status of the username (docs/user-guide.md
 * "Rate limits"; docs/decisions.md "What bloqueado means"): `bloqueado`
 * and `bloqueado_hasta`. Only a whole read carries them (not one with
 * `campos`), and only this route asks the store: other modules' reads
 * keep their one round trip.
 */
import { Type } from '@sinclair/typebox'
import { nullable } from '../../../core/field-types/common.js'
import { IdParams, envelope } from '../../../http/schemas.js'
import { DATETIME_PATTERN } from '../../field-formats.js'
import { readShapeParameters } from '../../list-parameters.js'
import { get } from '../get.js'
import type { Operation } from '../operation.js'

const lockFields = (timeZone: string) => ({
  bloqueado: Type.Optional(Type.Boolean({ description: 'Bloqueado para todo cliente sin un dispositivo recordado: 100 intentos fallidos desde cualquier dirección en 15 minutos. Solo en una lectura sin campos.' })),
  bloqueado_hasta: Type.Optional(nullable(Type.String({ pattern: DATETIME_PATTERN, description: `Cuándo termina ese bloqueo (AAAA-MM-DD HH:MM:SS, hora de ${timeZone}); null si no está bloqueado` }))),
})

export const getUser: Operation = {
  ...get,
  schema: (mod, ctx) => {
    const { schema } = get.schema(mod, ctx)
    const lock = Type.Object(lockFields(ctx.timeZone))
    // As the module's record schema: no `required` list (a partial read, withheld fields; generate/schemas.ts).
    const record = Type.Object({ ...ctx.schemas.record.properties, ...lockFields(ctx.timeZone) })
    delete (record as { required?: string[] }).required
    return {
      openapi: {
        etag: 'with-version',
        // As every module's read (generate/read-schemas.ts): whole, expanded (with refs) or partial; the lock fields beside.
        answer: envelope(Type.Union([
          Type.Intersect([ctx.recordRef, lock]),
          ...(mod.fields.some((f) => f.type === 'ref') ? [Type.Intersect([Type.Ref(ctx.schemas.expanded), lock])] : []),
          Type.Ref(ctx.schemas.partial),
        ])),
        querystring: Type.Object(readShapeParameters(mod), { additionalProperties: false }),
      },
      schema: { ...schema, params: IdParams, response: { 200: envelope(record) } },
    }
  },
  async handle (request, reply, mod) {
    const answer = await get.handle(request, reply, mod) as { success: true, data: Record<string, unknown> }
    const { campos } = request.query as { campos?: unknown }
    const username = answer.data.username
    if (campos !== undefined || typeof username !== 'string') return answer
    return { success: true, data: { ...answer.data, ...await request.server.sessions.lockStatus(username) } }
  },
}
