/**
 * The auditor's routes, superadmins only: GET /auditoria/lecturas — the read
 * log of decrypted data (SPEC S7; records/read-log.ts); POST
 * /auditoria/puntos-control — seal the global chain and publish a signed
 * checkpoint of its head now (SPEC S15; records/checkpoints.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { envelope } from '../http/schemas.js'

const Entry = Type.Object({
  usuario: Type.String(), fecha: Type.String(), modulo: Type.String(), registro: Type.String(),
  campos: Type.Array(Type.String()), ruta: Type.String(),
})

const Checkpoint = Type.Object({
  formato: Type.Integer({ description: 'Formato del punto de control (1)' }),
  seq: Type.Integer({ description: 'Entradas de la cadena global que cubre' }),
  cabeza: Type.String({ description: 'Enlace de la entrada seq (SHA-256, hex)' }),
  fecha: Type.String({ description: 'Instante de la firma (ISO 8601, UTC)' }),
  firma: Type.String({ description: 'Firma Ed25519 (base64) del JSON canónico de formato, seq, cabeza y fecha' }),
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

  app.post('/auditoria/puntos-control', {
    schema: {
      tags: ['Auditoría'],
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
