/**
 * `GET /{module}/{id}/historial`: every version of a record
 * (docs/operator-guide.md "History and verification"); deleted records too,
 * for callers who may see them (`eliminar`): an audit does not end with a deletion.
 */
import { Type } from '@sinclair/typebox'
import { IdParams, envelope } from '../../http/schemas.js'
import { ErasureCertificate } from '../../http/erasure-schemas.js'
import { idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const history: Operation = {
  method: 'GET',
  url: '/:id/historial',
  action: 'ver',
  schema: (mod, { recordRef, tags, operationId }) => ({
    schema: {
      tags,
      summary: `Versiones de un registro de ${mod.label}`,
      operationId: operationId('history'),
      params: IdParams,
      response: {
        200: envelope(Type.Object({
          versiones: Type.Array(Type.Object({
            _version: Type.Integer(),
            accion: Type.String({ enum: ['crear', 'editar', 'eliminar', 'restaurar', 'suprimir'] }),
            usuario: Type.String(),
            fecha: Type.String(),
            _hash: Type.String(),
            campos: Type.Array(Type.String(), { description: 'Campos cuyo valor cambió en esta versión' }),
            sello: Type.Integer({ description: 'Formato del sello de _hash (1, 2, 3 o 4; docs/operator-guide.md, "The hash chain")' }),
            campos_sellados: Type.Optional(Type.Array(Type.String(), { description: 'Formato 1: campos que entraron en _hash, también los nulos' })),
            supresion: Type.Optional(ErasureCertificate),
            registro: recordRef,
          })),
        })),
      },
    },
  }),
  async handle (request, _reply, mod) {
    return { success: true, data: { versiones: await request.records.of(mod).history(idOf(request)) } }
  },
}
