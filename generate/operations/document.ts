/**
 * `GET /{module}/{id}/documento`: the record printed as a PDF, with a code
 * its reader can verify (docs/user-guide.md "Printed records"). The records
 * service reads it as the caller may (and logs the read as a `documento`);
 * the printer lays it out and signs its code.
 */
import { contentDisposition } from '../../core/file-content.js'
import { IdParams } from '../../http/schemas.js'
import { idOf } from '../record-request.js'
import type { Operation } from './operation.js'

export const printRecord: Operation = {
  method: 'GET',
  url: '/:id/documento',
  action: 'ver',
  schema: (mod, { tags, operationId }) => ({
    schema: {
      tags,
      summary: `Imprimir un registro de ${mod.label} (PDF verificable)`,
      description: 'Una copia en PDF (A4) de la versión actual del registro: sus campos por su etiqueta, los cifrados solo con el permiso descifrar (si no, «Restringido»), sin los que modules.yaml excluye de la copia (documento.excluir); ' +
        'su identificador, versión, fechas y sello, y un código de verificación con su código QR, firmados con la clave de la fuerza (Ed25519), que comprueba POST /documentos/verificar. Cada copia queda en el registro de lecturas (tipo documento).',
      operationId: operationId('print'),
      params: IdParams,
      response: {
        200: { description: 'El PDF: ID-vN.pdf', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } },
      },
    },
  }),
  async handle (request, reply, mod) {
    const record = await request.records.of(mod).printable(idOf(request))
    const { pdf, filename } = await request.server.printer.print(mod, record, request.caller)
    return reply.type('application/pdf').header('content-disposition', contentDisposition(filename, true)).header('cache-control', 'no-store').send(pdf)
  },
}
