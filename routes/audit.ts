/** GET /auditoria/lecturas — the read log of decrypted data (SPEC S7; records/read-log.ts), superadmins only. */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { envelope } from '../http/schemas.js'

const Entry = Type.Object({
  usuario: Type.String(), fecha: Type.String(), modulo: Type.String(), registro: Type.String(),
  campos: Type.Array(Type.String()), ruta: Type.String(),
})

async function auditRoutes (app: FastifyInstance): Promise<void> {
  app.get('/auditoria/lecturas', {
    schema: {
      tags: ['Auditoría'],
      summary: 'Registro de lecturas de datos cifrados (solo superadmin)',
      response: { 200: envelope(Type.Object({ records: Type.Array(Entry), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) },
    },
  }, async (request) => {
    return { success: true, data: await request.records.reads(request.query as Record<string, unknown>) }
  })
}

export default fp(auditRoutes, { name: 'policia-audit-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records'] })
