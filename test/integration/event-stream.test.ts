/**
 * GET /eventos (docs/user-guide.md "Events: the live stream (eventos)";
 * SPEC S18) on a real listening server, read as a client reads
 * server-sent events: creates, updates and deletes arrive with their id,
 * event and data; modulos, tipos and a one-module filter; row-level scope
 * and masking, with the read log of what was decrypted; Last-Event-ID
 * resume without gap or duplicate, and a reload beyond the retention; the
 * heartbeat; the end after logout, password change, deactivation or a
 * lost permission made on a second instance; a write on a second
 * instance; the per-user limit; the 400s and 403s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { PASSWORD } from '../helpers/app.js'
import { expectError } from '../helpers/errors.js'
import { call, client, login, ok, validDni, type Api } from '../helpers/http.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'
import { freePort, listenApp } from '../helpers/free-port.js'
import { openStream, type Message, type Sse } from '../helpers/sse.js'

let h: Harness, app: FastifyInstance, app2: FastifyInstance, token: string, admin: Api, admin2: Api, base: string

/** A stream on the first instance. */
const open = async (path: string, tok: string, headers: Record<string, string> = {}): Promise<Sse> => openStream(base, path, tok, headers)

/** No message matching `pred` arrives within `ms` (after the others were seen). */
async function none (s: Sse, pred: (m: Message) => boolean, ms = 600): Promise<void> {
  await new Promise((r) => setTimeout(r, ms))
  expect(s.messages.filter(pred).map((m) => [m.id, m.event, m.data?.registro_id])).toEqual([])
}

const call092 = (tipo_incidencia = 'normal', extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ tipo_incidencia, descripcion: `Llamada ${tipo_incidencia}`, numero_llamada: '600111222', ...extra })

beforeAll(async () => {
  ({ h, app, token, admin } = await startTestApp({ env: { EVENT_HEARTBEAT_SECONDS: '1' } }))
  base = await listenApp(app)
  app2 = await h.app()
  admin2 = client(app2, token)
})

afterAll(async () => { await h?.close() })

describe('GET /eventos', () => {
  it('a create, an update, a delete and a restore arrive with their position, tipo and event JSON, in feed order', async () => {
    const s = await open('/eventos?modulos=sala092', token)
    expect(s.status).toBe(200)
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/)
    expect(s.headers['cache-control']).toMatch(/no-store/)
    const rec = ok(await admin.post('/sala092', call092()), 201)
    const created = await s.next()
    expect(created.event).toBe('sala092.creado')
    expect(created.data).toMatchObject({ tipo: 'sala092.creado', modulo: 'sala092', registro_id: rec._id, version: 1, usuario: rec._created_by, hash: rec._hash })
    expect(created.id).toBe(String(created.data.posicion))
    expect(created.data.fecha).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    expect(created.data.registro).toMatchObject({ _id: rec._id, numero_llamada: '600111222', tipo_incidencia: 'normal' })
    ok(await admin.put(`/sala092/${rec._id}`, { estado: 'en_curso' }))
    const updated = await s.next()
    expect(updated).toMatchObject({ event: 'sala092.actualizado', data: { registro_id: rec._id, version: 2, campos_cambiados: ['estado'], registro: { estado: 'en_curso' } } })
    ok(await admin.del(`/sala092/${rec._id}`))
    const deleted = await s.next()
    expect(deleted).toMatchObject({ event: 'sala092.eliminado', data: { registro_id: rec._id, version: 3 } })
    expect(deleted.data.registro._deleted).not.toBeNull()
    ok(await admin.post(`/sala092/${rec._id}/restaurar`))
    expect(await s.next()).toMatchObject({ event: 'sala092.restaurado', data: { registro_id: rec._id, version: 4 } })
    const ids = s.messages.map((m) => Number(m.id))
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    // The position is the global chain's: the history entry of that version sealed there.
    const [row] = await h.db.query<{ seq: string }>('select c.seq::text as seq from sys_cadena c join sys_historial hi on hi.id = c.historial where hi.registro = $1 and hi.version = 1', [rec._id])
    expect(created.id).toBe(row!.seq)
    s.close()
  })

  it('modulos and tipos choose what arrives; a write on a second instance reaches a stream on the first', async () => {
    const s = await open('/eventos?modulos=sala092,turnos&tipos=creado,sala092.actualizado', token)
    const personal = ok(await admin2.post('/personal', { tip: `TIP-${Date.now()}`, nif: validDni(Date.now() % 90_000_000), nombre: 'Ana', apellidos: 'Ruiz', escala: 'oficial' }), 201)
    const rec = ok(await admin2.post('/sala092', call092()), 201)
    ok(await admin2.put(`/sala092/${rec._id}`, { estado: 'resuelta' }))
    const t = ok(await admin2.post('/turnos', { agente_id: personal._id, fecha: '2026-05-01', tipo_turno: 'mañana', servicio: 'patrulla' }), 201)
    ok(await admin2.put(`/turnos/${t._id}`, { estado: 'confirmado' }))
    expect((await s.next()).data).toMatchObject({ tipo: 'sala092.creado', registro_id: rec._id })
    expect((await s.next()).data).toMatchObject({ tipo: 'sala092.actualizado', registro_id: rec._id })
    expect((await s.next()).data).toMatchObject({ tipo: 'turnos.creado', registro_id: t._id })
    await none(s, (m) => m.event === 'turnos.actualizado' || m.data?.modulo === 'personal')
    s.close()
  })

  it('the default modulos are every module the caller may see', async () => {
    const s = await open('/eventos', token)
    const rec = ok(await admin.post('/sala092', call092()), 201)
    const u = await newUser(app, token, 'consulta')
    expect((await s.next((m) => m.data?.registro_id === rec._id)).event).toBe('sala092.creado')
    expect((await s.next((m) => m.data?.registro_id === u.id)).event).toBe('usuarios.creado')
    s.close()
  })

  it('for one module, the list filters apply to the version written (any-of groups too)', async () => {
    const s = await open('/eventos?modulos=sala092&tipo_incidencia=urgente', token)
    const g = await open('/eventos?modulos=sala092&o[1][tipo_incidencia]=informacion&o[1][estado]=resuelta&fecha_hora_entrada[gte]=2026-01-01%2000:00:00', token)
    const normal = ok(await admin.post('/sala092', call092('normal')), 201)
    const urgent = ok(await admin.post('/sala092', call092('urgente')), 201)
    const info = ok(await admin.post('/sala092', call092('informacion')), 201)
    ok(await admin.put(`/sala092/${normal._id}`, { tipo_incidencia: 'urgente' }))
    ok(await admin.put(`/sala092/${normal._id}`, { estado: 'resuelta' }))
    expect((await s.next()).data).toMatchObject({ tipo: 'sala092.creado', registro_id: urgent._id })
    expect((await s.next()).data).toMatchObject({ tipo: 'sala092.actualizado', registro_id: normal._id, version: 2 })
    expect((await s.next()).data).toMatchObject({ tipo: 'sala092.actualizado', registro_id: normal._id, version: 3 })
    await none(s, (m) => m.data?.registro_id === info._id || (m.data?.registro_id === normal._id && m.data?.version === 1))
    expect((await g.next()).data).toMatchObject({ registro_id: info._id })
    expect((await g.next()).data).toMatchObject({ registro_id: normal._id, version: 3 })
    await none(g, (m) => m.data?.registro_id === urgent._id)
    s.close(); g.close()
  })

  it('scope and masking: an agente sees only its own records, decrypted; consulta every record, encrypted values withheld; decrypted values streamed are in the read log', async () => {
    const agente = await newUser(app, token, 'agente')
    const consulta = await newUser(app, token, 'consulta')
    const s = await open('/eventos?modulos=sala092', agente.token)
    const c = await open('/eventos?modulos=sala092', consulta.token)
    const a = await open('/eventos?modulos=sala092', token)
    const theirs = ok(await admin.post('/sala092', call092()), 201)
    const own = ok(await call(app, 'POST', '/sala092', { token: agente.token, body: call092() }), 201)
    ok(await admin.put(`/sala092/${own._id}`, { numero_llamada: '699000000', estado: 'en_curso' }))
    // The agente: its own call only, in plaintext (sala092.descifrar:propios).
    const created = await s.next()
    expect(created.data.registro_id).toBe(own._id)
    expect(created.data.registro.numero_llamada).toBe('600111222')
    expect(created.data.registro).not.toHaveProperty('_restringidos')
    const updated = await s.next()
    expect(updated.data).toMatchObject({ registro_id: own._id, version: 2 })
    expect(updated.data.campos_cambiados.sort()).toEqual(['estado', 'numero_llamada'])
    expect(updated.data.registro.numero_llamada).toBe('699000000')
    await none(s, (m) => m.data?.registro_id === theirs._id)
    // consulta: every call, the number withheld, its change not named.
    const masked = await c.next((m) => m.data?.registro_id === theirs._id)
    expect(masked.data.registro).not.toHaveProperty('numero_llamada')
    expect(masked.data.registro._restringidos).toEqual(['numero_llamada'])
    const maskedUpdate = await c.next((m) => m.data?.registro_id === own._id && m.data?.version === 2)
    expect(maskedUpdate.data.campos_cambiados).toEqual(['estado'])
    expect(maskedUpdate.data.registro._restringidos).toEqual(['numero_llamada'])
    const seen = await a.next((m) => m.data?.registro_id === own._id && m.data?.version === 2)
    expect(seen.data.campos_cambiados.sort()).toEqual(['estado', 'numero_llamada'])
    expect(seen.data.registro.numero_llamada).toBe('699000000')
    const reads = ok(await admin.get(`/auditoria/lecturas?registro=${own._id}&tipo=lectura`))
    const streamed = (user: string): boolean => reads.records.some((r: any) => r.ruta === 'GET /eventos' && r.campos.includes('numero_llamada') && r.usuario === user)
    expect(streamed(a.messages[0]!.data.usuario)).toBe(true)
    expect(streamed(agente.id)).toBe(true)
    expect(reads.records.some((r: any) => r.usuario === consulta.id)).toBe(false)
    s.close(); c.close(); a.close()
  })

  it('Last-Event-ID: every event missed since, then live, with no gap and no duplicate', async () => {
    const s = await open('/eventos?modulos=sala092', token)
    const first = ok(await admin.post('/sala092', call092()), 201)
    const seen = await s.next()
    expect(seen.data.registro_id).toBe(first._id)
    s.close()
    const missed = []
    for (let i = 0; i < 3; i++) missed.push(ok(await admin.post('/sala092', call092()), 201)._id)
    const r = await open('/eventos?modulos=sala092', token, { 'Last-Event-ID': seen.id! })
    const writing = Promise.all([0, 1].map(async () => ok(await admin2.post('/sala092', call092()), 201)._id))
    for (const id of missed) expect((await r.next()).data.registro_id).toBe(id)
    const live = await writing
    const after = [await r.next(), await r.next()]
    expect(after.map((m) => m.data.registro_id).sort()).toEqual([...live].sort())
    await none(r, () => false, 300)
    const ids = r.messages.map((m) => Number(m.id))
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(ids[0]).toBeGreaterThan(Number(seen.id))
    r.close()
  })

  it('a Last-Event-ID older than the retention, or not in this feed, gets a reload event, then live', async () => {
    // Two events in a row, their positions as a stream tells them (once sealed).
    const s = await open('/eventos', token)
    const old = ok(await admin.post('/sala092', call092()), 201)
    const next = ok(await admin.post('/sala092', call092()), 201)
    const position = Number((await s.next((m) => m.data?.registro_id === old._id)).id)
    expect(Number((await s.next()).id)).toBe(position + 1)
    s.close()
    // The first entry after the client's position (the next record's) was written 8 days ago (the retention is 7).
    await h.db.query("update sys_historial set fecha = fecha - interval '8 days' where id = (select historial from sys_cadena where seq = $1)", [position + 1])
    const r = await open('/eventos?modulos=sala092', token, { 'Last-Event-ID': String(position) })
    const reload = await r.next()
    expect(reload.event).toBe('recargar')
    expect(reload.data).toMatchObject({ motivo: 'retencion' })
    expect(Number(reload.id)).toBe(reload.data.posicion)
    const live = ok(await admin.post('/sala092', call092()), 201)
    expect((await r.next()).data.registro_id).toBe(live._id)
    expect(r.messages.filter((m) => m.data?.registro_id === next._id)).toEqual([])
    r.close()
    const beyond = await open('/eventos?modulos=sala092', token, { 'Last-Event-ID': '999999999' })
    expect((await beyond.next()).event).toBe('recargar')
    beyond.close()
  })

  it('a comment keeps an idle stream open (EVENT_HEARTBEAT_SECONDS)', async () => {
    const s = await open('/eventos?modulos=turnos', token)
    await new Promise((r) => setTimeout(r, 2_300))
    expect(s.comments.filter((c) => c === 'latido').length).toBeGreaterThanOrEqual(2)
    s.close()
  })
})

// Concurrent: each waits up to the stream's 2-s recheck (routes/events.ts), for a user of its own.
describe.concurrent('GET /eventos ends within 5 s when its session or permission goes (changed on another instance)', () => {
  const ends = async (s: Sse, motivo: string): Promise<void> => {
    const t0 = Date.now()
    const fin = await s.next((m) => m.event === 'fin', 5_000)
    expect(fin.data).toEqual({ motivo })
    await s.ended
    expect(Date.now() - t0).toBeLessThan(5_000)
  }

  it('logout', async () => {
    const u = await newUser(app, token, 'consulta')
    const s = await open('/eventos?modulos=sala092', u.token)
    ok(await call(app2, 'POST', '/auth/logout', { token: u.token }))
    await ends(s, 'sesion')
  })

  it('password change (the other sessions)', async () => {
    const u = await newUser(app, token, 'consulta')
    const s = await open('/eventos?modulos=sala092', u.token)
    const other = await login(app2, u.username, PASSWORD)
    ok(await call(app2, 'PUT', '/me/password', { token: other, body: { password_actual: PASSWORD, password_nueva: 'otra-contraseña-segura-987' } }))
    await ends(s, 'sesion')
  })

  it('deactivation', async () => {
    const u = await newUser(app, token, 'consulta')
    const s = await open('/eventos?modulos=sala092', u.token)
    ok(await admin2.put(`/usuarios/${u.id}`, { activo: false }))
    await ends(s, 'sesion')
  })

  it('sessions closed by an administrator', async () => {
    const u = await newUser(app, token, 'consulta')
    const s = await open('/eventos?modulos=sala092', u.token)
    ok(await admin2.post(`/usuarios/${u.id}/cerrar-sesiones`))
    await ends(s, 'sesion')
  })

  it('a lost permission (a role without ver on a module of the stream)', async () => {
    const u = await newUser(app, token, 'jefe')
    const s = await open('/eventos?modulos=usuarios', u.token)
    ok(await admin2.put(`/usuarios/${u.id}`, { rol: 'oficial' }))
    await ends(s, 'permisos')
  })
})

describe('GET /eventos on an instance that shuts down', () => {
  it('counts its open streams in the metrics, and ends them with `fin` when it closes', async () => {
    const port = await freePort()
    const app3 = await h.app({ env: { METRICS_PORT: String(port) } })
    const url3 = await listenApp(app3)
    const streams = [await openStream(url3, '/eventos', token), await openStream(url3, '/eventos?modulos=sala092', token)]
    const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    expect(await scrape()).toMatch(/^event_streams_open 2$/m)
    streams[1]!.close()
    for (let i = 0; i < 50 && !/^event_streams_open 1$/m.test(await scrape()); i++) await new Promise((r) => setTimeout(r, 50))
    expect(await scrape()).toMatch(/^event_streams_open 1$/m)
    await h.closeApp(app3)
    expect((await streams[0]!.next((m) => m.event === 'fin')).data).toEqual({ motivo: 'cierre' })
    await streams[0]!.ended
  })
})

describe('GET /eventos limits and refusals', () => {
  it('at most EVENT_STREAMS_PER_USER open streams per user, across instances; a closed one frees its slot', async () => {
    const u = await newUser(app, token, 'consulta')
    const url2 = await listenApp(app2)
    const streams = [await open('/eventos', u.token), await open('/eventos', u.token), await open('/eventos', u.token)]
    streams.push(await openStream(url2, '/eventos', u.token), await openStream(url2, '/eventos', u.token))
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200, 200])
    const sixth = await openStream(url2, '/eventos', u.token)
    expectError(sixth as Sse & { body: unknown }, 'DEMASIADOS_FLUJOS')
    expect(sixth.body.detalles[0].mensaje).toContain('5 flujos')
    expect(sixth.headers['retry-after']).toBe('30')
    streams[0]!.close()
    await new Promise((r) => setTimeout(r, 300))
    const again = await open('/eventos', u.token)
    expect(again.status).toBe(200)
    again.close()
    for (const s of streams) s.close()
  })

  it('a client that goes away leaves nothing behind: its feed listener, the stream and its slot', async () => {
    const u = await newUser(app, token, 'consulta')
    const before = app.feed.size
    const streams = await Promise.all(Array.from({ length: 5 }, async () => open('/eventos', u.token)))
    // The stream answers before it has subscribed to the feed.
    for (let i = 0; i < 50 && app.feed.size < before + 5; i++) await new Promise((r) => setTimeout(r, 50))
    expect(app.feed.size).toBe(before + 5)
    expect(app.eventStreams.size).toBe(5)
    for (const s of streams) s.close()
    for (let i = 0; i < 50 && (app.feed.size > before || app.eventStreams.size > 0); i++) await new Promise((r) => setTimeout(r, 50))
    expect(app.feed.size).toBe(before)
    expect(app.eventStreams.size).toBe(0)
    // A HEAD answers the head and ends at once, leaving nothing either.
    expect((await app.inject({ method: 'HEAD', url: '/eventos', headers: { authorization: `Bearer ${u.token}` } })).headers['content-type']).toMatch(/^text\/event-stream/)
    for (let i = 0; i < 50 && (app.feed.size > before || app.eventStreams.size > 0); i++) await new Promise((r) => setTimeout(r, 50))
    expect([app.feed.size, app.eventStreams.size]).toEqual([before, 0])
    const again = await Promise.all(Array.from({ length: 5 }, async () => open('/eventos', u.token)))
    expect(again.map((s) => s.status)).toEqual([200, 200, 200, 200, 200])
    for (const s of again) s.close()
  })

  it('opening a stream counts as one request against the rate limits; its checks while open do not', async () => {
    const u = await newUser(app, token, 'consulta')
    const limited = await h.app({ env: { RATE_LIMIT_TOKEN_MAX: '5' } })
    const url = await listenApp(limited)
    const s = await openStream(url, '/eventos', u.token)
    expect(s.headers['ratelimit-remaining']).toBe('4')
    // Two session checks at least (every 2 s), then the four requests the limit leaves.
    await new Promise((r) => setTimeout(r, 4_500))
    for (let i = 0; i < 4; i++) ok(await call(limited, 'GET', '/me', { token: u.token }))
    expectError(await call(limited, 'GET', '/me', { token: u.token }), 'DEMASIADAS_PETICIONES')
    s.close()
    await h.closeApp(limited)
  })

  it('400 for what a stream cannot take, 403 for a module the caller may not see, before the stream starts', async () => {
    const agente = await newUser(app, token, 'agente')
    const cases: Array<[string, string]> = [
      ['/eventos?modulos=sala093', 'modulos'],
      ['/eventos?modulos=sala092,', 'modulos'],
      ['/eventos?tipos=borrado', 'tipos'],
      ['/eventos?modulos=sala092&tipos=denuncias.creado', 'tipos'],
      ['/eventos?modulos=sala092,denuncias&tipo_incidencia=urgente', 'tipo_incidencia'],
      ['/eventos?modulos=sala092&q=robo', 'q'],
      ['/eventos?modulos=sala092&limit=5', 'limit'],
      ['/eventos?modulos=sala092&descripcion[contiene]=robo', 'descripcion[contiene]'],
      ['/eventos?modulos=sala092&numero_llamada=600111222', 'numero_llamada'],
      ['/eventos?modulos=sala092&fecha_hora_entrada[gte]=ayer', 'fecha_hora_entrada[gte]'],
      ['/eventos?modulos=sala092&resultado[vacio]=true', 'resultado[vacio]'],
      ['/eventos?modulos=sala092&desconocido=1', 'desconocido'],
    ]
    for (const [url, campo] of cases) {
      const res = await call(app, 'GET', url, { token })
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles.map((d: any) => d.campo), url).toEqual([campo])
    }
    const bad = await call(app, 'GET', '/eventos?modulos=sala092', { token, headers: { 'last-event-id': 'ayer' } })
    expectError(bad, 'DATOS_INVALIDOS')
    expectError(await call(app, 'GET', '/eventos?modulos=usuarios', { token: agente.token }), 'SIN_PERMISOS')
    expectError(await call(app, 'GET', '/eventos?modulos=sala092'), 'TOKEN_NO_PROPORCIONADO')
  })
})
