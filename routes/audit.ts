/**
 * The auditor's routes, superadmins only: GET /auditoria/lecturas — the read
 * log of decrypted data and of searches on encrypted fields (docs/operator-guide.md "Read log";
 * records/read-log.ts); POST
 * /auditoria/puntos-control — seal the global chain and publish a signed
 * checkpoint of its head now (docs/operator-guide.md "Tamper evidence: the global chain and checkpoints"; records/integrity/checkpoints.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { envelope } from '../http/schemas.js'
import '../http/openapi-docs.js'
import { READ_LOG_KINDS } from '../records/read-log.js'
import { DATETIME_INPUT_PATTERN, datetimeText } from '../core/time-patterns.js'

/** An end of the period: read as any date-time of a body is (core/time.ts parseDateTime). */
const instant = (which: string, timeZone: string): ReturnType<typeof Type.String> =>
  Type.String({ pattern: DATETIME_INPUT_PATTERN, description: `${which} (incluido): ${datetimeText(timeZone, true)}` })

/** The read log's query parameters (records/read-log.ts), documented only: the records service checks them. */
const readsQuery = (timeZone: string): ReturnType<typeof Type.Object> => Type.Object({
  tipo: Type.Optional(Type.String({ enum: [...READ_LOG_KINDS], description: 'lectura: datos cifrados mostrados; busqueda: un listado filtrado por un campo cifrado; exportar: una exportación con datos descifrados; descarga: un archivo cifrado descargado; acceso: un archivo sin cifrar descargado; documento: una copia impresa (PDF) de un registro; interesado: una búsqueda de los registros de una persona por su DNI (nunca el DNI)' })),
  usuario: Type.Optional(Type.String({ description: 'Id del usuario que leyó (USR-…)' })),
  modulo: Type.Optional(Type.String({ description: 'Módulo del registro leído' })),
  registro: Type.Optional(Type.String({ description: 'Id del registro leído' })),
  desde: Type.Optional(instant('Desde', timeZone)),
  hasta: Type.Optional(instant('Hasta', timeZone)),
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 100, description: 'Por página (máximo 1000)' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
}, { additionalProperties: false })

/** One entry of the read log as GET /auditoria/lecturas answers it (also in a person's search, routes/data-protection.ts). */
export const ReadLogEntry = Type.Object({
  tipo: Type.String({ enum: [...READ_LOG_KINDS] }),
  usuario: Type.String(), fecha: Type.String(), modulo: Type.String(),
  registro: Type.Union([Type.String(), Type.Null()], { description: 'Registro leído o cuyo archivo se descargó (null en una busqueda o una exportación)' }),
  campos: Type.Array(Type.String(), { description: 'Campos cifrados leídos, o por los que se filtró (nunca el valor buscado)' }),
  ruta: Type.String(),
  coincidencias: Type.Optional(Type.Integer({ description: 'Solo en una busqueda (el total del listado) o una búsqueda de interesado: registros que coincidieron' })),
  filtro: Type.Optional(Type.String({ description: 'Solo en una exportación: su consulta, con los valores de filtros de campos cifrados como *' })),
  archivo: Type.Optional(Type.String({ description: 'Solo en una descarga o un acceso: el id del archivo' })),
})

const Checkpoint = Type.Object({
  formato: Type.Integer({ description: 'Formato del punto de control (2; 1 en los escritos antes de que la cadena tuviera identidad)' }),
  cadena: Type.Optional(Type.String({ description: 'Identidad de la cadena global de este despliegue (32 hex; formato 2)' })),
  seq: Type.Integer({ description: 'Entradas de la cadena global que cubre' }),
  cabeza: Type.String({ description: 'Enlace de la entrada seq (SHA-256, hex)' }),
  fecha: Type.String({ description: 'Instante de la firma (ISO 8601, UTC)' }),
  firma: Type.String({ description: 'Firma Ed25519 (base64) del JSON canónico de los demás campos' }),
})

async function auditRoutes (app: FastifyInstance): Promise<void> {
  app.get('/auditoria/lecturas', {
    config: { openapi: { querystring: readsQuery(app.config.timeZone), errors: [403] } },
    schema: {
      tags: ['Auditoría'],
      operationId: 'listLecturas',
      summary: 'Registro de lecturas de datos cifrados (superadmin y delegado de protección de datos)',
      response: { 200: envelope(Type.Object({ records: Type.Array(ReadLogEntry), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) },
    },
  }, async (request) => {
    return { success: true, data: await request.records.reads(request.query as Record<string, unknown>) }
  })

  app.post('/auditoria/puntos-control', {
    config: { openapi: { errors: [403, 503] } },
    schema: {
      tags: ['Auditoría'],
      operationId: 'createPuntoControl',
      summary: 'Sellar la cadena global y publicar ahora un punto de control firmado (solo superadmin)',
      response: {
        200: envelope(Type.Object({
          punto_control: Type.Union([Checkpoint, Type.Null()]),
          sellados: Type.Integer({ description: 'Entradas del historial selladas en esta pasada' }),
          clave_publica: Type.String({ description: 'Clave pública Ed25519 (32 bytes, base64) que verifica la firma' }),
          motivo: Type.Optional(Type.String({ description: 'Por qué no se firmó: la cadena ya no prolonga el último punto de control' })),
        })),
      },
    },
  }, async (request) => {
    return { success: true, data: await request.records.checkpoint() }
  })
}

export default fp(auditRoutes, { name: 'policia-audit-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records'] })
