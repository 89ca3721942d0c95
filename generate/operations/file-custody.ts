/**
 * `GET /{module}/{id}/archivos/{campo}/{archivo}/custodia`: a file's chain
 * of custody, who uploaded, downloaded and removed it and when
 * (docs/user-guide.md "Evidence files"). `ver` on the record, as a download.
 */
import { Type } from '@sinclair/typebox'
import { envelope } from '../../http/schemas.js'
import { idOf } from '../record-request.js'
import { documentedFileParams, fileParams, FileView } from './file-params.js'
import type { Operation } from './operation.js'

const Event = Type.Object({
  accion: Type.String({ enum: ['subida', 'retirada', 'descarga'] }),
  usuario: Type.String({ description: 'Id del usuario' }),
  fecha: Type.String(),
  version: Type.Optional(Type.Integer({ description: 'Versión del registro que añadió o retiró el archivo' })),
  rango: Type.Optional(Type.String({ description: 'Una descarga parcial: sus bytes (inicio-fin)' })),
})

export const fileCustody: Operation = {
  method: 'GET',
  url: '/:id/archivos/:campo/:archivo/custodia',
  action: 'ver',
  schema: (mod, { tags, operationId }) => ({
    // 400: a field that holds no files, an archivo id past 64 characters.
    openapi: { params: documentedFileParams(mod, true), errors: [400] },
    schema: {
      tags,
      summary: `Cadena de custodia de un archivo de ${mod.label}`,
      description: 'Quién subió el archivo, quién lo descargó (del registro de lecturas si está cifrado, del registro de accesos si no) y quién lo retiró del campo, en orden.',
      operationId: operationId('fileCustody'),
      params: fileParams(mod, true),
      response: { 200: envelope(Type.Object({ archivo: FileView, cifrado: Type.Boolean(), eventos: Type.Array(Event) })) },
    },
  }),
  async handle (request, _reply, mod) {
    const { campo, archivo } = request.params as { campo: string, archivo: string }
    return { success: true, data: await request.records.of(mod).custody(idOf(request), campo, archivo) }
  },
}
