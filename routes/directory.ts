/**
 * GET /directorio (docs/user-guide.md "People by name (directorio)"): the
 * names of the users and staff members among some ids, for any signed-in
 * caller: what a screen shows instead of `USR-2026-00001` (created by,
 * history, custody, assignments), one request per page.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { envelope } from '../http/schemas.js'
import '../http/openapi-docs.js'
import { DIRECTORY_MAX_IDS, directoryIds, directoryNames } from '../records/directory.js'

/** Documented only: records/directory.ts reads and checks it. */
const Query = Type.Object({
  ids: Type.String({ description: `Ids de usuarios (USR-…) y de personal separados por comas, como máximo ${DIRECTORY_MAX_IDS}; los que no son de nadie se omiten` }),
}, { additionalProperties: false })

const Person = Type.Object({
  id: Type.String(),
  nombre: Type.String({ description: 'Usuario: su nombre (o su nombre de usuario); personal: nombre y apellidos' }),
})

async function directoryRoutes (app: FastifyInstance): Promise<void> {
  app.get('/directorio', {
    config: { openapi: { querystring: Query } },
    schema: {
      tags: ['Autenticación'],
      operationId: 'getDirectorio',
      summary: 'Nombres de usuarios y personal por sus ids',
      response: { 200: envelope(Type.Array(Person)) },
    },
  }, async (request) => {
    return { success: true, data: await directoryNames(app.orm.em, app.registry, directoryIds(request.query)) }
  })
}

export default fp(directoryRoutes, { name: 'policia-directory-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-orm'] })
