/**
 * `POST /{module}/{id}/archivos/{campo}?nombre=…`: the raw body is a file,
 * streamed to the file store and added to the field as an update of the
 * record (docs/user-guide.md "Evidence files"). Any media type; the body
 * reaches the handler unread (generate/routes.ts gives `fileBody` routes a
 * parser of their own), up to FILE_MAX_BYTES.
 */
import type { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { envelope } from '../../http/schemas.js'
import { idOf } from '../record-request.js'
import { NAMED_UPLOAD_TYPES } from '../../core/file-content.js'
import { documentedFileParams, fileParams, FileView } from './file-params.js'
import type { Operation } from './operation.js'

const Query = Type.Object({
  nombre: Type.String({ description: 'Nombre del archivo (se sanea: sin rutas ni caracteres de control)', maxLength: 1000 }),
}, { additionalProperties: false })

export const uploadFile: Operation = {
  method: 'POST',
  url: '/:id/archivos/:campo',
  action: 'editar',
  config: { fileBody: true },
  schema: (mod, { recordRef, tags, operationId }) => ({
    openapi: {
      body: {
        description: 'El contenido del archivo tal cual. Content-Type, su tipo, debe coincidir con el contenido; application/octet-stream sirve para cualquiera (el tipo se reconoce por los primeros bytes), y también se admite otro tipo de medio que no esté en la lista',
        // Concrete types: `*/*` would have a generated client send `Content-Type: */*`, which is no media type (400).
        content: Object.fromEntries(NAMED_UPLOAD_TYPES.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])),
      },
      params: documentedFileParams(mod, false),
      errors: [409, 413, 415],
    },
    schema: {
      tags,
      summary: `Subir un archivo a un registro de ${mod.label}`,
      description: 'Guarda el archivo y lo añade al campo como una modificación del registro (nueva versión, historial, sello, evento).',
      operationId: operationId('uploadFile'),
      params: fileParams(mod, false),
      querystring: Query,
      response: { 201: envelope(Type.Object({ archivo: FileView, registro: recordRef })) },
    },
  }),
  async handle (request, reply, mod) {
    const { campo } = request.params as { campo: string }
    const length = request.headers['content-length']
    const data = await request.records.of(mod).upload(idOf(request), campo, {
      body: request.body as Readable | undefined,
      contentType: request.headers['content-type'],
      length: length === undefined ? undefined : Number(length),
      nombre: (request.query as { nombre?: string }).nombre,
    })
    void reply.code(201)
    return { success: true, data }
  },
}
