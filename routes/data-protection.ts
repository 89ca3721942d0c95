/**
 * The data-protection officer's routes (docs/user-guide.md "Personal data";
 * SPEC S27), for roles with `proteccion_datos: true` in modules.yaml only:
 * POST /proteccion-datos/{module}/{id}/suprimir erases a record's personal
 * data in every stored version and keeps its chain verifiable
 * (records/data-protection/erasure.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError, invalid } from '../core/errors.js'
import { envelope } from '../http/schemas.js'
import { ErasureSummary } from '../http/erasure-schemas.js'
import '../http/openapi-docs.js'

const tags = ['Protección de datos']

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
}

export default fp(dataProtectionRoutes, { name: 'policia-data-protection-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records'] })
