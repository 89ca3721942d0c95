/**
 * `GET /{module}/{id}/archivos/{campo}/{archivo}`: a file's bytes, streamed
 * with its type, `Content-Disposition` (inline only for types a browser
 * shows without running anything), `ETag` = its SHA-256, and one byte range
 * (docs/user-guide.md "Evidence files").
 */
import { contentDisposition, showsInline } from '../../core/file-content.js'
import { byteRange } from '../../http/byte-range.js'
import { FILE_ANSWER } from '../../http/file-answer.js'
import { idOf } from '../record-request.js'
import { documentedFileParams, fileParams } from './file-params.js'
import type { Operation } from './operation.js'

const binary = { schema: { type: 'string', format: 'binary' } }

export const downloadFile: Operation = {
  method: 'GET',
  url: '/:id/archivos/:campo/:archivo',
  action: 'ver',
  // CSP sandbox and no-store on every answer, errors included (http/file-answer.ts).
  config: FILE_ANSWER,
  schema: (mod, { tags, operationId }) => ({
    openapi: {
      headers: { type: 'object', properties: { Range: { type: 'string', description: 'Un rango de bytes: bytes=inicio-fin, bytes=inicio-, bytes=-n' } } },
      params: documentedFileParams(mod, true),
      // 400: a field that holds no files, an archivo id past 64 characters.
      errors: [400, 416],
    },
    schema: {
      tags,
      summary: `Descargar un archivo de un registro de ${mod.label}`,
      operationId: operationId('downloadFile'),
      params: fileParams(mod, true),
      response: {
        200: { description: 'El archivo (ETag: su SHA-256)', content: { '*/*': binary } },
        206: { description: 'Un rango del archivo (Content-Range)', content: { '*/*': binary } },
        304: { description: 'If-None-Match con su ETag: sin cambios', type: 'null' },
      },
    },
  }),
  async handle (request, reply, mod) {
    const { campo, archivo } = request.params as { campo: string, archivo: string }
    const ifRange = request.headers['if-range']
    const asked = request.headers.range
    const { item, size, range, body } = await request.records.of(mod).download(idOf(request), campo, archivo,
      // A stale If-Range (not this file's ETag): the whole file.
      (total, sha256) => ifRange === undefined || ifRange === `"${sha256}"` ? byteRange(asked, total) : undefined)
    const tag = `"${item.sha256}"`
    void reply
      .header('etag', tag)
      .header('accept-ranges', 'bytes')
      .header('content-disposition', contentDisposition(item.nombre, showsInline(item.tipo)))
      .type(item.tipo)
    if (request.headers['if-none-match'] === tag) { body.destroy(); return reply.code(304).send() }
    if (range === undefined) return reply.header('content-length', size).send(body)
    return reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`).header('content-length', range.end - range.start + 1).send(body)
  },
}
