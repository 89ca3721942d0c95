/**
 * `GET /{module}/exportar`: every record of a list's query as a CSV or
 * NDJSON download (docs/user-guide.md "Export (exportar)"). A static path:
 * Fastify's router prefers it to `/:id` whatever the order of registration.
 */
import { Type } from '@sinclair/typebox'
import { listQuerystring } from '../list-parameters.js'
import { SEPARATORS } from '../../records/csv-dialect.js'
import { EXPORT_FORMATS, EXPORT_HEADERS } from '../../records/export-query.js'
import { selectable } from '../../records/fields-query.js'
import type { Operation } from './operation.js'

/** The list's parameters but the page (an export holds every record) and `expandir` (it expands nothing, so `campos` names no `x.y`). */
function exportQuerystring (...args: Parameters<typeof listQuerystring>): ReturnType<typeof Type.Object> {
  const { limit: _l, offset: _o, expandir: _e, campos, ...list } = listQuerystring(...args).properties
  return Type.Object({
    formato: Type.Optional(Type.String({ enum: [...EXPORT_FORMATS], default: 'csv', description: 'csv (RFC 4180, UTF-8 con BOM, con cabecera) o ndjson (un registro JSON por línea)' })),
    separador: Type.Optional(Type.String({ enum: [...SEPARATORS], default: ',', description: 'Separador de campos del CSV: ; para hojas de cálculo en español' })),
    cabeceras: Type.Optional(Type.String({ enum: [...EXPORT_HEADERS], default: 'nombres', description: 'Cabecera del CSV: los nombres de los campos (nombres) o sus etiquetas (etiquetas, lo que lee una persona); las columnas del sistema (_id, _hash …) conservan su nombre. Una importación acepta cualquiera de las dos' })),
    campos: Type.Optional(Type.String({ examples: campos?.examples, description: `Solo estos campos, separados por comas (y siempre _id), en el orden del registro: la cabecera del CSV o las claves de cada línea; solo los cifrados nombrados se descifran y se registran. Sin referencia.campo ni expandir. Campos: ${selectable(args[0]).join(', ')}` })),
    ...list,
  }, { additionalProperties: false })
}

const text = { schema: { type: 'string' } }

export const exportRecords: Operation = {
  method: 'GET',
  url: '/exportar',
  action: 'exportar',
  schema: (mod, { registry, timeZone, tags, operationId }) => ({
    openapi: { querystring: exportQuerystring(mod, registry, timeZone) },
    schema: {
      tags,
      summary: `Exportar ${mod.label}`,
      description: 'Todos los registros que cumplen los filtros (sin límite de 1000), de una instantánea coherente, en CSV o NDJSON. Los campos cifrados solo con el permiso descifrar; si no, vacíos y nombrados en _restringidos.',
      operationId: operationId('export'),
      response: {
        200: {
          description: `Descarga: ${mod.path}-AAAA-MM-DD.csv o .ndjson`,
          headers: {
            'Content-Disposition': { type: 'string', description: `attachment; filename="${mod.path}-AAAA-MM-DD.csv" (la fecha en la zona horaria del servicio)` },
          },
          content: { 'text/csv': text, 'application/x-ndjson': text },
        },
      },
    },
  }),
  async handle (request, reply, mod) {
    const { stream, contentType, filename } = await request.records.of(mod).export(request.query as Record<string, string | string[]>)
    void reply.type(contentType).header('content-disposition', `attachment; filename="${filename}"`)
    return stream
  },
}
