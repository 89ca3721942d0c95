/**
 * `POST /{module}/importar`: many records from a CSV or NDJSON body, all
 * or none; `simular=true` only reports (docs/user-guide.md "Import
 * (importar)"). The body arrives as a stream (plugins/import-body.ts); the
 * records service reads, validates and writes it (records/import-rows.ts).
 */
import type { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { AppError } from '../../core/errors.js'
import type { FieldDef, ModuleDef, Registry } from '../../core/registry/types.js'
import { formatOf } from '../../core/field-types/formats/index.js'
import { envelope } from '../../http/schemas.js'
import type { Separator } from '../../records/csv-dialect.js'
import { IMPORT_ENCODINGS, type ImportEncoding } from '../../records/import-text.js'
import { clientSignal, importEncoding, importFailed } from '../import-request.js'
import { rowValidator } from '../row-validator.js'
import type { Operation } from './operation.js'

const Problem = Type.Object({
  fila: Type.Integer({ description: 'Fila del fichero: en CSV la cabecera es la 1 (como en una hoja de cálculo); en NDJSON, el número de línea' }),
  campo: Type.String({ description: 'Campo; vacío: la fila entera' }),
  mensaje: Type.String(),
})

/** What a CSV's reading leaves out without refusing the file (the files of a file field), on row 1. */
const Notes = Type.Optional(Type.Array(Problem, { description: 'Avisos (solo si los hay): lo que la importación omite sin rechazar el fichero, como los archivos de un campo de archivos en un CSV (se suben después a cada registro)' }))

const Report = Type.Object({
  filas: Type.Integer({ description: 'Registros leídos (sin la cabecera)' }),
  validas: Type.Integer({ description: 'Registros sin ningún problema' }),
  errores: Type.Array(Problem, { description: 'Problemas por fila y campo, en orden de fila (a lo sumo 1000)' }),
  errores_omitidos: Type.Integer({ description: 'Problemas más allá de los 1000 mostrados' }),
  avisos: Notes,
})

const Done = Type.Object({
  filas: Type.Integer(),
  creados: Type.Integer(),
  ids: Type.Array(Type.String(), { description: 'Ids de los registros creados, en el orden del fichero' }),
  avisos: Notes,
})

const Query = Type.Object({
  simular: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: no escribe nada; responde el informe de problemas' })),
  separador: Type.Optional(Type.Union([Type.Literal(','), Type.Literal(';')], { description: 'CSV: separador de celdas; sin él, el de la línea de cabecera' })),
  codificacion: Type.Optional(Type.Union(IMPORT_ENCODINGS.map((e) => Type.Literal(e)), { description: 'Codificación del cuerpo; sin ella, el charset del Content-Type, y si no lo hay, utf-8 (Excel en español escribe windows-1252)' })),
}, { additionalProperties: false })

/** A value of each type for the examples: its format's sample where it declares one. */
function sample (f: FieldDef, registry: Registry): unknown {
  if (f.enum !== undefined) return f.enum[0]
  const format = formatOf(f)
  if (format !== undefined) return format.importSample
  switch (f.type) {
    case 'integer': return 1
    case 'decimal': return 10.5
    case 'boolean': return true
    case 'date': return '2026-06-01'
    case 'datetime': return '2026-06-01 10:00:00'
    case 'time': return '08:30'
    case 'array': return []
    case 'ref': return `${registry.byName.get(f.ref!)!.prefix}-2026-00001`
    case 'password': return 'una-contraseña-larga'
    default: return `Texto de ${f.name}`
  }
}

/** The module's required fields, as a CSV (`;`, with BOM) and as an NDJSON line. */
function examples (mod: ModuleDef, registry: Registry): { csv: string, ndjson: string } {
  const fields = mod.fields.filter((f) => f.required)
  const row = Object.fromEntries(fields.map((f) => [f.name, sample(f, registry)]))
  const cell = (v: unknown): string => typeof v === 'string' ? v : JSON.stringify(v)
  return {
    csv: `\uFEFF${fields.map((f) => f.name).join(';')}\r\n${Object.values(row).map(cell).join(';')}\r\n`,
    ndjson: `${JSON.stringify(row)}\n`,
  }
}

export const importRecords: Operation = {
  method: 'POST',
  url: '/importar',
  action: 'importar',
  config: { importBody: true, idempotencyKey: true },
  schema: (mod, { registry, tags, operationId }) => ({
    openapi: {
      body: {
        description: 'Un registro por fila, validado como el cuerpo de un POST; columnas y claves que empiezan por `_` se ignoran',
        content: {
          'text/csv': { schema: { type: 'string', description: 'El dialecto de la exportación, y lo que escriben pandas y las hojas de cálculo: UTF-8 (con o sin BOM), cabecera con los nombres o las etiquetas de los campos, separador `,` o `;`, comillas RFC 4180, celda vacía = campo no enviado, enteros como `3` o `3.0`, booleanos true/false, True/False o VERDADERO/FALSO, listas en JSON o como las escribe Python, fechas y horas con desfase; con `;`, coma decimal (`90,5`) y fechas dd/mm/aaaa; prefijo `\'` antifórmula retirado; los archivos de un campo de archivos se omiten con un aviso', examples: [examples(mod, registry).csv] } },
          'application/x-ndjson': { schema: { type: 'string', description: 'Un objeto JSON por línea', examples: [examples(mod, registry).ndjson] } },
        },
      },
      errors: [409],
    },
    schema: {
      tags,
      summary: `Importar registros de ${mod.label} (CSV o NDJSON, todos o ninguno)`,
      operationId: operationId('import'),
      querystring: Query,
      response: {
        200: envelope(Report),
        201: envelope(Done),
      },
    },
  }),
  async handle (request, reply, mod) {
    const body = request.body as Readable | undefined
    const type = request.headers['content-type'] ?? ''
    // A JSON body reaches here parsed: only the two streamed types are an import.
    if (body === undefined || body === null || typeof (body as { pipe?: unknown }).pipe !== 'function') throw new AppError('TIPO_CONTENIDO_NO_SOPORTADO')
    const query = request.query as { simular?: 'true' | 'false', separador?: Separator, codificacion?: ImportEncoding }
    const encoding = importEncoding(request, query.codificacion)
    const signal = clientSignal(reply)
    const answer = await request.records.of(mod).import({
      input: body,
      format: type.startsWith('text/csv') ? 'csv' : 'ndjson',
      encoding,
      simular: query.simular === 'true',
      validate: rowValidator(mod, request.server.registry, request.server.config.timeZone),
      maxRows: request.server.config.importMaxRows,
      signal,
      ...(query.separador !== undefined && { separador: query.separador }),
    }).catch((err: unknown) => { importFailed(request, signal); throw err })
    if (answer.simulado) return { success: true, data: answer.informe }
    void reply.code(201)
    return { success: true, data: answer.hecho }
  },
}
