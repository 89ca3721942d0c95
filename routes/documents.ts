/**
 * `POST /documentos/verificar` (docs/user-guide.md "Printed records"):
 * anyone holding a printed copy checks its code, without a token, within
 * the per-address limit every public route has (like the login). The
 * answer says whether the code holds, its id and version, and whether a
 * newer version exists; nothing else of the record.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { envelope } from '../http/schemas.js'
import '../http/openapi-docs.js'
import { verifyCode } from '../records/documents/code-verification.js'
import { verifyWithPublicKey } from '../records/integrity/checkpoint-format.js'

const Body = Type.Object({
  codigo: Type.String({
    minLength: 1,
    maxLength: 400,
    description: 'El código de verificación de la copia impresa (ID.VERSIÓN.FIRMA, bajo su código QR); se ignoran espacios y saltos de línea, y las minúsculas valen por mayúsculas',
    examples: ['DEN-2026-00001.1.VOV2XK5LVOV2XK5LVOV2XK5LVOV2XK5LVOV2XK5LVOV2XK5LVOVUAL2DIRIH2OM6Q4SG6S2CBLPV5RNSUK6JNGDNUHA4YIWJE4GTZGFNE36Q3YVNZUA722G23FTQSCB2KXAVTVFYOQPGV2BHAUO3Y2ZGBA'],
  }),
}, { additionalProperties: false })

const Verdict = Type.Object({
  valido: Type.Boolean({ description: 'La firma es de la clave de este servicio y el historial del registro guarda esa versión con ese sello' }),
  id: Type.String({ description: 'El registro que nombra el código' }),
  version: Type.Integer({ minimum: 1, description: 'La versión que reproduce la copia' }),
  hay_version_posterior: Type.Optional(Type.Boolean({ description: 'Solo si es válido: el registro tiene una versión posterior (se editó o se eliminó después de imprimir la copia)' })),
  motivo: Type.Optional(Type.String({ description: 'Solo si no es válido: por qué' })),
})

async function documentRoutes (app: FastifyInstance): Promise<void> {
  const publicKey = app.signer.publicKey
  app.post('/documentos/verificar', {
    config: { public: true },
    schema: {
      tags: ['Documentos'],
      operationId: 'verifyDocumento',
      summary: 'Verificar una copia impresa por su código (sin token)',
      description: 'Comprueba la firma Ed25519 del código con la clave de este servicio y que el historial del registro guarda esa versión con ese sello. Sin conexión, lo mismo hace npm run verificar-documento con la clave pública (npm run integrity-key -- --publica).',
      body: Body,
      response: { 200: envelope(Verdict) },
    },
  }, async (request) => {
    const { codigo } = request.body as { codigo: string }
    return { success: true, data: await verifyCode(request.em, app.registry, codigo, (message, signature) => verifyWithPublicKey(publicKey, message, signature)) }
  })
}

export default fp(documentRoutes, { name: 'policia-document-routes', fastify: '5.x', dependencies: ['policia-config', 'policia-system-keys', 'policia-orm'] })
