/**
 * GET /eventos: the live stream of events as server-sent events
 * (docs/user-guide.md "Events: the live stream (eventos)"). The
 * query and the caller's permissions are checked before the stream starts
 * (errors in the usual envelope); a slot of the user's
 * EVENT_STREAMS_PER_USER is taken across instances (stores/stream-slots);
 * then records/events/live-stream.ts runs the stream over the app's feed
 * (`app.feed`), and this file only wires it to the response and the
 * caller's records. Opening a stream is one request against the rate
 * limits (plugins/auth.ts); the checks made while it is open are not.
 */
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import { PassThrough } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError, DETAILS, invalid } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import { feedHead, readFeed, writtenAt } from '../records/events/feed.js'
import { LiveStream, type EndReason } from '../records/events/live-stream.js'
import { parseStreamQuery } from '../records/events/stream-query.js'
import '../http/openapi-docs.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The live streams open on this instance and their responses (the `event_streams_open` gauge, plugins/metrics.ts). */
    eventStreams: Map<LiveStream, ServerResponse>
  }
}

/** How often an open stream checks its session and permissions again: a revoked one ends within 5 s. */
const RECHECK_MS = 2_000
/** A slot's lease: a dead instance's slots free up after it. Renewed three times per lease. */
const LEASE_MS = 30_000
const ROUTE = 'GET /eventos'
/** How long a closing instance waits for its streams' clients to take `fin`. */
const CLOSE_WAIT_MS = 2_000

const EventsQuery = Type.Object({
  modulos: Type.Optional(Type.String({ description: 'Módulos separados por comas (por defecto, todos los que el usuario puede ver)', examples: ['sala092,denuncias'] })),
  tipos: Type.Optional(Type.String({ description: 'Tipos separados por comas: creado, actualizado, eliminado, restaurado, suprimido (de todos los módulos del flujo) o <módulo>.<tipo>', examples: ['creado,denuncias.actualizado'] })),
}, { additionalProperties: Type.String({ description: 'Con un único módulo en modulos: los filtros de su listado (p. ej. tipo_incidencia=urgente); no q, contiene sobre texto ni filtros por campos cifrados' }) })

const DESCRIPTION = [
  'Flujo text/event-stream con cada evento que el usuario puede ver: `id: <posicion>`, `event: <tipo>` (p. ej. `denuncias.creado`) y `data: <evento JSON>`',
  '({posicion, tipo, modulo, registro_id, version, fecha, usuario, campos_cambiados, hash, registro}).',
  'Con un único módulo en modulos, los filtros de su listado (p. ej. `tipo_incidencia=urgente`, `o[1][estado]=pendiente`) sobre la versión escrita; no q, contiene sobre texto, vacio sobre texto o listas, ni filtros por campos cifrados.',
  'Con la cabecera Last-Event-ID envía lo ocurrido desde esa posición y sigue en vivo; si es más antigua que la retención, un `event: recargar`.',
  'Un comentario `: latido` cada 15 s. Al cerrarse la sesión, caducar el token o perder el permiso, un `event: fin` con su motivo, y se cierra.',
].join(' ')

/** `Last-Event-ID`: a position (a whole number), or none. */
function lastEventId (request: FastifyRequest): number | undefined {
  const raw = request.headers['last-event-id']
  if (raw === undefined || raw === '') return undefined
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw.trim())) throw invalid('Last-Event-ID', 'debe ser la posición (id) del último evento recibido')
  return Number(raw.trim())
}

async function eventRoutes (app: FastifyInstance): Promise<void> {
  // Each with its response, for a close that a client too slow to take `fin` would hold up.
  const streams = new Map<LiveStream, ServerResponse>()
  app.decorate('eventStreams', streams)
  const { eventStreamsPerUser: max, eventRetentionDays, eventHeartbeatSeconds } = app.config
  // Fastify waits for busy connections on close: streams are ended first, and cut after CLOSE_WAIT_MS.
  app.addHook('preClose', async () => {
    const ended = Promise.all([...streams.keys()].map(async (s) => s.end('cierre')))
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())])
    for (const res of streams.values()) res.destroy()
  })

  const sees = (caller: FastifyRequest['caller'], mod: ModuleDef): boolean => app.access.scope(caller.rol, mod.name, 'ver') !== 'none'

  app.get('/eventos', {
    config: { openapi: { querystring: EventsQuery, errors: [403] } },
    schema: {
      tags: ['Eventos'],
      operationId: 'streamEventos',
      summary: 'Flujo de eventos en vivo (server-sent events)',
      description: DESCRIPTION,
      response: {
        200: {
          description: 'El flujo: mensajes `id`/`event`/`data` separados por una línea en blanco, comentarios `: latido`, y `event: recargar` o `event: fin` ({motivo}) cuando corresponde',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
      },
    },
  }, async (request, reply) => {
    let caller = request.caller
    const q = parseStreamQuery(request.query as Record<string, string | string[] | undefined>, app.registry.modules, (m) => sees(caller, m))
    const filter = q.filtro === undefined ? undefined : request.records.of(q.modulos[0]!).eventFilter(q.filtro)
    const last = lastEventId(request)
    const slot = randomUUID()
    const take = async (): Promise<boolean> => app.stores.streamSlots.acquire(caller.id, slot, max, LEASE_MS)
    // Retry-After as every 429 has it: the longest a slot of a stream that died unseen stays taken.
    if (!await take()) throw new AppError('DEMASIADOS_FLUJOS', [{ campo: 'eventos', mensaje: DETAILS.FLUJOS_ABIERTOS(max) }], { 'retry-after': String(LEASE_MS / 1000) })

    const body = new PassThrough()
    const res = reply.raw
    const gone = (): boolean => res.destroyed || res.writableEnded
    const stream: LiveStream = new LiveStream({
      read: async (after, limit, modulos) => readFeed(app.orm.em.fork(), after, limit, modulos),
      head: async () => feedHead(app.orm.em.fork()),
      writtenAt: async (posicion) => writtenAt(app.orm.em.fork(), posicion),
      listen: async (fn) => app.feed.listen(fn),
      // A fresh EntityManager per batch: the read log is written through it, and nothing is held between batches.
      view: async (mod, entries) => app.records.forRequest({ em: app.orm.em.fork(), reads: app.orm.em, caller, route: () => ROUTE }).of(mod).events(entries),
      recheck: async (): Promise<EndReason | undefined> => {
        try {
          caller = await app.recheckCaller(caller)
        } catch (err) {
          if (err instanceof AppError && err.code === 'TOKEN_INVALIDO') return caller.exp * 1000 <= Date.now() ? 'expirado' : 'sesion'
          throw err
        }
        return q.modulos.every((m) => sees(caller, m)) ? undefined : 'permisos'
      },
      renew: take,
      write: async (text) => {
        if (gone() || body.destroyed || body.write(text)) return
        // A slow client: wait until it took the rest, or went away (the listeners go with the wait).
        const waiting = new AbortController()
        await Promise.race([once(body, 'drain', { signal: waiting.signal }), once(res, 'close', { signal: waiting.signal })]).finally(() => { waiting.abort() })
      },
      close: () => { body.end() },
      onProblem: (message, err) => { request.log.warn({ err }, message) },
    }, {
      modulos: q.modulos,
      ...(q.tipos !== undefined && { tipos: q.tipos }),
      ...(filter !== undefined && { filter }),
      ...(last !== undefined && { lastEventId: last }),
      retentionMs: eventRetentionDays * 86_400_000,
      heartbeatMs: eventHeartbeatSeconds * 1000,
      recheckMs: RECHECK_MS,
      renewMs: LEASE_MS / 3,
      expiresAt: caller.exp * 1000,
    })
    streams.set(stream, res)
    // The client went away, or the stream ended: every listener, timer and the slot go.
    res.once('close', () => {
      stream.stop()
      streams.delete(stream)
      body.destroy()
      app.stores.streamSlots.release(caller.id, slot).catch((err) => { request.log.warn({ err }, 'a live stream slot could not be freed; its lease frees it') })
    })
    void reply.type('text/event-stream; charset=utf-8').header('x-accel-buffering', 'no')
    stream.start().catch(async (err) => {
      request.log.warn({ err }, 'a live stream could not start; it ends')
      await stream.end('error')
    })
    return reply.send(body)
  })
}

export default fp(eventRoutes, { name: 'policia-event-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records', 'policia-events'] })
