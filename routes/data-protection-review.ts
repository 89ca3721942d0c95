/**
 * The retention review and the officer's decisions on a record
 * (docs/user-guide.md "Personal data"), for roles with `proteccion_datos:
 * true` in modules.yaml: the records due (GET /proteccion-datos/revision),
 * running the review now (POST), prolonging a record's retention, blocking
 * and unblocking it; and the decisions kept (GET /proteccion-datos/decisiones,
 * which superadmins read too). The daily run: plugins/retention-review.ts.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { hostname } from 'node:os'
import { Type } from '@sinclair/typebox'
import { AppError } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import { envelope } from '../http/schemas.js'
import '../http/openapi-docs.js'

const tags = ['Protección de datos']

const Reason = Type.String({ minLength: 1, maxLength: 2000, description: 'Por qué (queda en el registro de decisiones con su autor y su fecha)' })

const Decision = Type.Object({
  fecha: Type.String(),
  usuario: Type.String({ description: 'Quién decidió (USR-…)' }),
  modulo: Type.String(),
  id: Type.String(),
  accion: Type.String({ enum: ['prolongar', 'bloquear', 'desbloquear', 'suprimir'] }),
  motivo: Type.String(),
  hasta: Type.Union([Type.String(), Type.Null()], { description: 'Solo en una prórroga: hasta cuándo (AAAA-MM-DD)' }),
})

const DueRecord = Type.Object({
  modulo: Type.String(),
  id: Type.String(),
  desde: Type.String({ description: 'La fecha desde la que cuenta la conservación (AAAA-MM-DD)' }),
  vence: Type.String({ description: 'La fecha en que venció (AAAA-MM-DD)' }),
  estado: Type.Union([Type.String(), Type.Null()], { description: 'El estado del registro, si el módulo tiene campo de estado' }),
  eliminado: Type.Boolean(),
  bloqueado: Type.Union([Type.String(), Type.Null()], { description: 'Desde cuándo está bloqueado, o null' }),
})

const RecordParams = (paths: string[]) => Type.Object({
  modulo: Type.String({ description: 'Ruta del módulo', examples: paths.slice(0, 3) }),
  id: Type.String({ description: 'Id del registro' }),
})

async function dataProtectionReviewRoutes (app: FastifyInstance): Promise<void> {
  const paths = app.registry.modules.map((m) => m.path)
  const instance = `${hostname()}:${process.pid}`
  const moduleAt = (path: string): ModuleDef => {
    const mod = app.registry.byPath.get(path)
    if (mod === undefined) throw new AppError('MODULO_NO_ENCONTRADO')
    return mod
  }

  app.get('/proteccion-datos/revision', {
    config: {
      openapi: {
        querystring: Type.Object({
          modulo: Type.Optional(Type.String({ description: 'Solo los de este módulo (uno con conservacion declarada)' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, default: 20 })),
          offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
        }),
        errors: [400, 403],
      },
    },
    schema: {
      tags,
      operationId: 'listarRevision',
      summary: 'Los registros cuya conservación venció, para revisar (solo delegado de protección de datos)',
      description: 'Los que la revisión diaria encontró: su fecha desde más los años de conservacion es hoy o anterior, están en uno de sus estados, ninguna prórroga llega más allá de hoy y no se suprimieron después de su último cambio. Primero los que vencieron antes.',
      response: {
        200: envelope(Type.Object({
          records: Type.Array(DueRecord),
          total: Type.Integer(),
          limit: Type.Integer(),
          offset: Type.Integer(),
          ultima_revision: Type.Union([Type.Object({ dia: Type.String(), fecha: Type.String(), total: Type.Integer() }), Type.Null()], { description: 'La última revisión: su día, cuándo corrió y cuántos registros encontró' }),
        })),
      },
    },
  }, async (request) => ({ success: true, data: await request.records.review(request.query as Record<string, unknown>) }))

  app.post('/proteccion-datos/revision', {
    config: { openapi: { errors: [403] } },
    schema: {
      tags,
      operationId: 'revisarAhora',
      summary: 'Hacer ahora la revisión de conservación (solo delegado de protección de datos)',
      description: 'La misma revisión que corre cada día, ahora (por ejemplo tras cambiar conservacion en modules.yaml). Si otra instancia la está haciendo, espera a que acabe.',
      response: { 200: envelope(Type.Object({ dia: Type.String(), total: Type.Integer({ description: 'Registros pendientes de revisar' }) })) },
    },
  }, async (request) => {
    const run = await request.records.reviewNow(instance)
    return { success: true, data: { dia: run.dia, total: run.total ?? 0 } }
  })

  app.post('/proteccion-datos/:modulo/:id/prolongar', {
    config: { openapi: { errors: [400, 403, 404, 409] } },
    schema: {
      tags,
      operationId: 'prolongarConservacion',
      summary: 'Prolongar la conservación de un registro (solo delegado de protección de datos)',
      description: 'El registro sale de la revisión hasta la fecha dada; la decisión queda registrada con su motivo.',
      params: RecordParams(paths),
      body: Type.Object({ motivo: Reason, hasta: Type.String({ format: 'date', description: 'Nueva fecha de revisión, posterior a hoy (AAAA-MM-DD)', examples: ['2027-06-30'] }) }, { additionalProperties: false }),
      response: { 200: envelope(Decision) },
    },
  }, async (request) => {
    const { modulo, id } = request.params as { modulo: string, id: string }
    return { success: true, data: await request.records.prolong(moduleAt(modulo), id, request.body as { motivo: string, hasta: string }) }
  })

  for (const [verb, block] of [['bloquear', true], ['desbloquear', false]] as const) {
    app.post(`/proteccion-datos/:modulo/:id/${verb}`, {
      config: { openapi: { errors: [400, 403, 404, 409] } },
      schema: {
        tags,
        operationId: block ? 'bloquearRegistro' : 'desbloquearRegistro',
        summary: block ? 'Bloquear un registro (solo delegado de protección de datos)' : 'Desbloquear un registro (solo delegado de protección de datos)',
        description: block
          ? 'Desde ahora solo lo leen el delegado de protección de datos y el superadministrador, y cada lectura queda en el registro de lecturas (tipo bloqueado); para los demás no existe (404), tampoco en listados, exportaciones, resúmenes, eventos ni copias impresas. El registro no cambia de versión.'
          : 'Vuelve a leerse como antes del bloqueo. La decisión queda registrada con su motivo.',
        params: RecordParams(paths),
        body: Type.Object({ motivo: Reason }, { additionalProperties: false }),
        response: { 200: envelope(Type.Object({ ...Decision.properties, bloqueado: Type.Union([Type.String(), Type.Null()], { description: 'Desde cuándo está bloqueado, o null' }) })) },
      },
    }, async (request) => {
      const { modulo, id } = request.params as { modulo: string, id: string }
      return { success: true, data: await request.records.block(moduleAt(modulo), id, (request.body as { motivo: string }).motivo, block) }
    })
  }

  app.get('/proteccion-datos/decisiones', {
    config: {
      openapi: {
        querystring: Type.Object({
          modulo: Type.Optional(Type.String({ description: 'Nombre del módulo' })),
          id: Type.Optional(Type.String({ description: 'Id del registro' })),
          accion: Type.Optional(Type.String({ enum: ['prolongar', 'bloquear', 'desbloquear', 'suprimir'] })),
          limit: Type.Optional(Type.Integer({ minimum: 1, default: 20 })),
          offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
        }),
        errors: [400, 403],
      },
    },
    schema: {
      tags,
      operationId: 'listarDecisiones',
      summary: 'Las decisiones de protección de datos: prórrogas, bloqueos, desbloqueos y supresiones (delegado de protección de datos y superadministrador)',
      description: 'La más reciente primero, cada una con su autor, su fecha y su motivo.',
      response: { 200: envelope(Type.Object({ records: Type.Array(Decision), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) },
    },
  }, async (request) => ({ success: true, data: await request.records.decisions(request.query as Record<string, unknown>) }))
}

export default fp(dataProtectionReviewRoutes, { name: 'policia-data-protection-review-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records'] })
