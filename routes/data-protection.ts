/**
 * The data-protection officer's routes (docs/user-guide.md "Personal data";
 * docs/administrator-guide.md "Personal data"), for roles with `proteccion_datos: true` in modules.yaml only:
 * POST /proteccion-datos/{module}/{id}/suprimir erases a record's personal
 * data in every stored version and keeps its chain verifiable
 * (records/data-protection/erasure.ts); GET /proteccion-datos/interesado
 * finds every record holding a person's DNI, with who read each
 * (records/data-protection/interested-party.ts), and
 * GET /proteccion-datos/interesado/documento prints the same search as a PDF
 * (records/documents/person-report.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError, invalid } from '../core/errors.js'
import { contentDisposition } from '../core/file-content.js'
import { envelope } from '../http/schemas.js'
import { ErasureSummary } from '../http/erasure-schemas.js'
import { ReadLogEntry } from './audit.js'
import { personDni, READS_SHOWN } from '../records/data-protection/interested-party.js'
import '../http/openapi-docs.js'

const tags = ['Protección de datos']
const DniQuery = Type.Object({ dni: Type.String({ description: 'DNI o NIE de la persona, con su letra de control', examples: ['12345678Z'] }) })

async function dataProtectionRoutes (app: FastifyInstance): Promise<void> {
  const paths = app.registry.modules.map((m) => m.path)
  app.post('/proteccion-datos/:modulo/:id/suprimir', {
    config: { openapi: { errors: [400, 403, 404, 409] } },
    schema: {
      tags,
      operationId: 'suprimirDatosPersonales',
      summary: 'Suprimir los datos personales de un registro (solo delegado de protección de datos)',
      description: 'Anula, en la versión actual y en todas las del historial, los campos cifrados del registro y los declarados personal: true (también los subcampos de sus arrays estructurados), y escribe la supresión como una versión nueva con su motivo y su autor. ' +
        'La cadena de integridad debe sostenerse antes (si no, 409 y no se suprime nada); después, GET …/verificar sigue respondiendo valido: true y nombra la supresión.',
      params: Type.Object({
        modulo: Type.String({ description: 'Ruta del módulo', examples: paths.slice(0, 3) }),
        id: Type.String({ description: 'Id del registro' }),
      }),
      body: Type.Object({ motivo: Type.String({ minLength: 1, maxLength: 2000, description: 'Por qué se suprimen (p. ej. «Plazo de conservación cumplido» o «Solicitud del interesado de 3 de marzo»)' }) }, { additionalProperties: false }),
      response: {
        200: envelope(Type.Object({
          _id: Type.String(),
          _version: Type.Integer({ description: 'La versión que escribió la supresión' }),
          supresion: ErasureSummary,
        })),
      },
    },
  }, async (request) => {
    const { modulo, id } = request.params as { modulo: string, id: string }
    const mod = app.registry.byPath.get(modulo)
    if (mod === undefined) throw new AppError('MODULO_NO_ENCONTRADO')
    const motivo = (request.body as { motivo: string }).motivo.trim()
    if (motivo === '') throw invalid('motivo', 'no puede estar vacío')
    return { success: true, data: await request.records.erase(mod, id, motivo) }
  })

  app.get('/proteccion-datos/interesado', {
    config: { openapi: { querystring: DniQuery, errors: [400, 403] } },
    schema: {
      tags,
      operationId: 'buscarInteresado',
      summary: 'Los registros de una persona por su DNI, y quién los leyó (solo delegado de protección de datos)',
      description: 'Todos los registros de todos los módulos, también los eliminados, que guardan el DNI en un campo o un subcampo de formato dni (los cifrados, por su índice ciego), con las últimas lecturas de cada uno. ' +
        'La búsqueda queda en el registro de lecturas (tipo interesado), sin el DNI. no_buscables nombra los campos de formato dni cifrados sin índice (searchable) que no se pueden consultar.',
      response: {
        200: envelope(Type.Object({
          registros: Type.Array(Type.Object({
            modulo: Type.String(),
            id: Type.String(),
            campos: Type.Array(Type.String(), { description: 'Dónde guarda el DNI; los subcampos como testigos.dni' }),
            eliminado: Type.Boolean(),
            lecturas: Type.Object({
              total: Type.Integer(),
              records: Type.Array(ReadLogEntry, { description: `Las ${READS_SHOWN} más recientes, la última primero` }),
            }),
          })),
          total: Type.Integer(),
          no_buscables: Type.Array(Type.String(), { description: 'modulo.campo de formato dni cifrados sin índice ciego' }),
        })),
      },
    },
  }, async (request) => {
    return { success: true, data: await request.records.person(request.query as Record<string, unknown>) }
  })

  app.get('/proteccion-datos/interesado/documento', {
    config: { openapi: { querystring: DniQuery, errors: [400, 403] } },
    schema: {
      tags,
      operationId: 'imprimirInteresado',
      summary: 'Los registros de una persona por su DNI, en PDF (solo delegado de protección de datos)',
      description: 'La misma búsqueda que GET /proteccion-datos/interesado, como un informe en PDF (A4) para entregar o archivar: el DNI buscado, cuándo y quién lo imprimió, y cada registro con su módulo, su identificador, si está eliminado, dónde guarda el DNI y sus últimas lecturas; al final, los campos de DNI que no se pueden buscar, si los hay. ' +
        'La búsqueda queda en el registro de lecturas (tipo interesado), sin el DNI, como la otra.',
      response: {
        200: { description: 'El PDF: interesado-AAAA-MM-DD.pdf', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } },
      },
    },
  }, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    const answer = await request.records.person(query)
    const { pdf, filename } = await app.printer.printPerson(app.registry.byName, answer, personDni(query.dni), request.caller)
    // A report to hand over or file, so saved rather than shown in the browser (a printed record opens inline).
    return reply.type('application/pdf').header('content-disposition', contentDisposition(filename, false)).header('cache-control', 'no-store').send(pdf)
  })
}

export default fp(dataProtectionRoutes, { name: 'policia-data-protection-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records', 'policia-documents'] })
