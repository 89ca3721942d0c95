/**
 * GET /auditoria/lecturas — the read log of decrypted data (SPEC S7), for
 * superadmins (holders of `*.*`) only. Filters: usuario, modulo, registro
 * (exact), desde/hasta (date-times in the service zone); limit/offset as in
 * every list; newest first.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError, invalid } from '../core/errors.js'
import { formatDateTime, parseDateTime } from '../core/time.js'
import { isCleanText } from '../core/text.js'
import { hint } from '../core/registry/suggest.js'
import { envelope } from '../http/schemas.js'
import { parsePage } from '../records/list-query.js'
import { ReadLogEntity, type ReadLogRow } from '../records/read-log.js'

const PARAMS = ['usuario', 'modulo', 'registro', 'desde', 'hasta', 'limit', 'offset']

const Entry = Type.Object({
  usuario: Type.String(), fecha: Type.String(), modulo: Type.String(), registro: Type.String(),
  campos: Type.Array(Type.String()), ruta: Type.String(),
})

function text (query: Record<string, unknown>, key: string): string | undefined {
  const v = query[key]
  if (v === undefined) return undefined
  if (typeof v !== 'string' || !isCleanText(v) || v.length > 200) throw invalid(key, 'valor no válido')
  return v
}

async function auditRoutes (app: FastifyInstance): Promise<void> {
  app.get('/auditoria/lecturas', {
    schema: {
      tags: ['Auditoría'],
      summary: 'Registro de lecturas de datos cifrados (solo superadmin)',
      response: { 200: envelope(Type.Object({ records: Type.Array(Entry), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })) },
    },
  }, async (request) => {
    if (!app.access.isSuper(request.caller.rol)) throw new AppError('SIN_PERMISOS')
    const query = request.query as Record<string, unknown>
    for (const key of Object.keys(query)) {
      if (!PARAMS.includes(key)) throw invalid(key, `parámetro desconocido${hint(key, PARAMS)}`)
    }
    const where: Record<string, unknown> = {}
    for (const key of ['usuario', 'modulo', 'registro'] as const) {
      const v = text(query, key)
      if (v !== undefined) where[key] = v
    }
    const range: Record<string, Date> = {}
    // Both ends inclusive, to the second shown: `hasta` takes in its whole second.
    for (const [key, op] of [['desde', '$gte'], ['hasta', '$lt']] as const) {
      const v = text(query, key)
      if (v === undefined) continue
      const d = parseDateTime(v, app.config.timeZone)
      if (d === null) throw invalid(key, "debe ser una fecha y hora 'YYYY-MM-DD HH:MM:SS'")
      range[op] = op === '$lt' ? new Date(d.getTime() + 1000) : d
    }
    if (Object.keys(range).length > 0) where.fecha = range
    const { limit, offset } = parsePage(query as Record<string, string | string[]>)
    const [rows, total] = await request.em.findAndCount(ReadLogEntity, where, { orderBy: [{ fecha: 'desc' }, { id: 'desc' }], limit, offset })
    return {
      success: true,
      data: {
        records: rows.map((r: ReadLogRow) => ({ usuario: r.usuario, fecha: formatDateTime(new Date(r.fecha), app.config.timeZone), modulo: r.modulo, registro: r.registro, campos: r.campos, ruta: r.ruta })),
        total,
        limit,
        offset,
      },
    }
  })
}

export default fp(auditRoutes, { name: 'policia-audit-routes', fastify: '5.x', dependencies: ['policia-auth'] })
