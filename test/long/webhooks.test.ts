/**
 * Webhooks (docs/user-guide.md "Webhooks (suscripciones)"), delivered to a
 * real receiver on 127.0.0.1: the secret shown once, the signature as
 * Standard Webhooks verifies it, feed order in a burst, retries then
 * success (after errors and after a target that did not answer in 10 s), every failure without an answer recorded
 * alike as `sin respuesta`, a 4xx given up, the pause after the (shortened) retry window
 * and the resume, a replay, tipos and filtro, the payload shaped by the
 * subscription's role (withheld, or decrypted and in the read log as a
 * read by the subscription), two instances delivering each event once,
 * the permission, and targets that are not public refused at write (every
 * form) and at delivery (a name, a mapped address, this machine's own
 * addresses).
 */
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net'
import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { freePort, listenFree } from '../helpers/free-port.js'
import { client, ok, type Api } from '../helpers/http.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js'
import type { Harness } from '../helpers/app.js'

// Retries 200 ms, 400 ms, 800 ms …; a failing subscription pauses after 2 s; a lease lasts 2 s.
const ENV = { LOG_LEVEL: process.env.TEST_LOG ?? 'silent', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE: '200ms', WEBHOOK_RETRY_WINDOW: '2s', WEBHOOK_LEASE: '2s' }

let h: Harness
let app: FastifyInstance
let admin: Api
let token: string
let rx: Receiver

beforeAll(async () => {
  ({ h, app, admin, token } = await startTestApp({ env: ENV }))
  rx = await startReceiver()
})

afterAll(async () => {
  await rx?.close()
  await h?.close()
})

const call092 = (tipo_incidencia = 'normal', extra: Record<string, unknown> = {}) => ({ tipo_incidencia, descripcion: 'Llamada de prueba', numero_llamada: '600111222', ...extra })

async function subscribe (path: string, fields: Record<string, unknown> = {}): Promise<{ id: string, secreto: string }> {
  const data = ok(await admin.post('/suscripciones', { url: rx.url(path), modulos: ['sala092'], rol: 'jefe', ...fields }), 201)
  return { id: data._id, secreto: data.secreto }
}

async function entregas (id: string): Promise<any> {
  return ok(await admin.get(`/suscripciones/${id}/entregas`))
}

async function until<T> (what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('a subscription', () => {
  it('shows a generated secret once, signs each POST with it (Standard Webhooks), and sends the event JSON', async () => {
    const { id, secreto } = await subscribe('/firma')
    expect(secreto).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const got = ok(await admin.get(`/suscripciones/${id}`))
    expect(got).not.toHaveProperty('secreto')
    expect(JSON.stringify(ok(await admin.get('/suscripciones')))).not.toContain(secreto)
    expect(JSON.stringify(ok(await admin.get(`/suscripciones/${id}/historial`)))).not.toContain(secreto)

    const rec = ok(await admin.post('/sala092', call092()), 201)
    const [req] = await rx.waitFor('/firma', 1)
    const event = new Webhook(secreto).verify(req!.body, req!.headers as Record<string, string>) as any
    expect(event).toMatchObject({ tipo: 'sala092.creado', modulo: 'sala092', registro_id: rec._id, version: 1, usuario: expect.any(String), hash: rec._hash })
    expect(event.registro).toMatchObject({ _id: rec._id, numero_llamada: '600111222' })
    expect(req!.headers['webhook-id']).toBe(`${id}-${event.posicion}`)
    // Another secret does not verify it.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 9).toString('base64')}`).verify(req!.body, req!.headers as Record<string, string>)).toThrow()
    // The attempt and the position are recorded once the receiver's answer is back, a moment after it got the POST.
    const { entregas: attempts, estado } = await until('the recorded attempt', async () => {
      const e = await entregas(id)
      return e.entregas.length > 0 && e.estado.posicion === event.posicion ? e : undefined
    })
    expect(attempts[0]).toMatchObject({ posicion: event.posicion, estado: 200, resultado: 'entregado', error: null })
    expect(estado).toMatchObject({ posicion: event.posicion, pausada: false })
  })

  it('takes a secret given at create, and a new one on update, never showing it', async () => {
    const mine = `whsec_${Buffer.alloc(32, 3).toString('base64')}`
    const data = ok(await admin.post('/suscripciones', { url: rx.url('/dado'), modulos: ['sala092'], rol: 'jefe', secreto: mine }), 201)
    expect(data).not.toHaveProperty('secreto')
    const next = `whsec_${Buffer.alloc(32, 4).toString('base64')}`
    expect(ok(await admin.put(`/suscripciones/${data._id}`, { secreto: next }))).not.toHaveProperty('secreto')
    ok(await admin.post('/sala092', call092()), 201)
    const [req] = await rx.waitFor('/dado', 1)
    expect(() => new Webhook(next).verify(req!.body, req!.headers as Record<string, string>)).not.toThrow()
    const bad = await admin.post('/suscripciones', { url: rx.url('/x'), modulos: ['sala092'], rol: 'jefe', secreto: 'corto' })
    expect(bad.status).toBe(400)
    // Removed: refused (every delivery is signed).
    const cleared = await admin.put(`/suscripciones/${data._id}`, { secreto: null })
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(400)
    expect(cleared.body.detalles[0].campo).toBe('secreto')
  })

  it('delivers a burst in feed order, one event at a time', async () => {
    await subscribe('/orden')
    const ids: string[] = []
    for (let i = 0; i < 8; i++) ids.push(ok(await admin.post('/sala092', call092()), 201)._id)
    const got = await rx.waitFor('/orden', 8)
    expect(got.map((r) => r.json.registro_id)).toEqual(ids)
    const positions = got.map((r) => r.json.posicion as number)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
  })

  it('retries a 500 with the same webhook-id until it succeeds, gives a 4xx up and moves on', async () => {
    rx.answer('/reintentos', 500, 503, 200, 404)
    const { id } = await subscribe('/reintentos')
    const first = ok(await admin.post('/sala092', call092()), 201)
    const second = ok(await admin.post('/sala092', call092()), 201)
    const third = ok(await admin.post('/sala092', call092()), 201)
    const got = await rx.waitFor('/reintentos', 5)
    expect(got.map((r) => r.json.registro_id)).toEqual([first._id, first._id, first._id, second._id, third._id])
    expect(new Set(got.slice(0, 3).map((r) => r.headers['webhook-id'])).size).toBe(1)
    const { entregas: attempts } = await until('five attempts', async () => {
      const e = await entregas(id)
      return e.entregas.length >= 5 ? e : undefined
    })
    expect(attempts.map((a: any) => [a.estado, a.resultado]).reverse()).toEqual([[500, 'reintento'], [503, 'reintento'], [200, 'entregado'], [404, 'descartado'], [200, 'entregado']])
    expect(attempts[0].latencia_ms).toBeGreaterThanOrEqual(0)
  })

  it('retries a target that does not answer within 10 s, with the same webhook-id', async () => {
    rx.answer('/mudo', 0, 200)
    const { id } = await subscribe('/mudo')
    const rec = ok(await admin.post('/sala092', call092()), 201)
    const got = await rx.waitFor('/mudo', 2, 30_000)
    expect(got.map((r) => r.json.registro_id)).toEqual([rec._id, rec._id])
    expect(got[1]!.headers['webhook-id']).toBe(got[0]!.headers['webhook-id'])
    const { entregas: attempts } = await until('two attempts', async () => {
      const e = await entregas(id)
      return e.entregas.length >= 2 ? e : undefined
    })
    const [late, delivered] = [...attempts].reverse()
    expect(late).toMatchObject({ resultado: 'reintento', error: 'sin respuesta' })
    expect(late.estado).toBeNull()
    expect(late.latencia_ms).toBeGreaterThanOrEqual(10_000)
    expect(delivered).toMatchObject({ resultado: 'entregado', estado: 200 })
  })

  it('records a refused connection, a reset, a failed TLS handshake and a silence alike: "sin respuesta" and the time taken', async () => {
    // Nothing listens on `closed`; `reset` accepts and resets; https to the plain receiver fails its handshake; `/callado` never answers.
    const closed = await freePort()
    const reset: TcpServer = createTcpServer((socket) => { socket.resetAndDestroy() })
    await listenFree(reset)
    rx.answer('/callado', 0)
    try {
      const urls = [`http://127.0.0.1:${closed}/cerrado`, `http://127.0.0.1:${(reset.address() as { port: number }).port}/reinicio`, rx.url('/tls').replace('http:', 'https:'), rx.url('/callado')]
      const ids = await Promise.all(urls.map(async (url) => ok(await admin.post('/suscripciones', { url, modulos: ['sala092'], rol: 'jefe' }), 201)._id as string))
      ok(await admin.post('/sala092', call092()), 201)
      const first = await Promise.all(ids.map(async (id) => until(`the first attempt of ${id}`, async () => (await entregas(id)).entregas.at(-1), 30_000)))
      for (const [i, attempt] of first.entries()) {
        expect(attempt, urls[i]).toMatchObject({ estado: null, resultado: 'reintento', error: 'sin respuesta', latencia_ms: expect.any(Number) })
      }
      expect(first[3].latencia_ms).toBeGreaterThanOrEqual(10_000)
      for (const id of ids) ok(await admin.del(`/suscripciones/${id}`))
    } finally {
      await new Promise((resolve) => { reset.close(resolve) })
    }
  })

  it('pauses a subscription failing past its retry window, and resumes it', async () => {
    rx.always('/pausa', 500)
    const { id } = await subscribe('/pausa')
    const rec = ok(await admin.post('/sala092', call092()), 201)
    const paused = await until('the pause', async () => {
      const e = await entregas(id)
      return e.estado.pausada === true ? e : undefined
    })
    expect(paused.entregas[0]).toMatchObject({ resultado: 'pausada', estado: 500 })
    expect(paused.entregas.length).toBeGreaterThanOrEqual(3)
    expect(paused.estado.fallando_desde).toEqual(expect.any(String))
    const tried = rx.at('/pausa').length
    rx.always('/pausa', undefined)
    const resumed = ok(await admin.post(`/suscripciones/${id}/reanudar`))
    expect(resumed).toMatchObject({ pausada: false, intentos: 0, fallando_desde: null })
    const got = await rx.waitFor('/pausa', tried + 1)
    expect(got.at(-1)!.json.registro_id).toBe(rec._id)
    await until('the delivery', async () => (await entregas(id)).entregas[0].resultado === 'entregado' ? true : undefined)
  })

  it('replays from a position', async () => {
    const { id } = await subscribe('/reproducir')
    const a = ok(await admin.post('/sala092', call092()), 201)
    const b = ok(await admin.post('/sala092', call092()), 201)
    const got = await rx.waitFor('/reproducir', 2)
    const from = got[0]!.json.posicion as number
    expect(ok(await admin.post(`/suscripciones/${id}/reproducir`, { desde: from }))).toMatchObject({ posicion: from - 1 })
    const again = await rx.waitFor('/reproducir', 4)
    expect(again.slice(2).map((r) => r.json.registro_id)).toEqual([a._id, b._id])
    expect(again.slice(2).map((r) => r.headers['webhook-id'])).toEqual(got.map((r) => r.headers['webhook-id']))
    expect((await admin.post(`/suscripciones/${id}/reproducir`, { desde: 0 })).status).toBe(400)
  })

  it('covers only its tipos and its filtro, judged on the record as written', async () => {
    await subscribe('/filtro', { tipos: ['sala092.actualizado'], filtro: 'tipo_incidencia=urgente' })
    const urgent = ok(await admin.post('/sala092', call092('urgente')), 201)
    const normal = ok(await admin.post('/sala092', call092('normal')), 201)
    ok(await admin.put(`/sala092/${normal._id}`, { descripcion: 'Sigue normal' }))
    ok(await admin.put(`/sala092/${urgent._id}`, { descripcion: 'Actualizada' }))
    ok(await admin.put(`/sala092/${urgent._id}`, { tipo_incidencia: 'normal' }))
    ok(await admin.put(`/sala092/${normal._id}`, { tipo_incidencia: 'urgente' }))
    const got = await rx.waitFor('/filtro', 2)
    expect(got.map((r) => [r.json.tipo, r.json.registro_id, r.json.version])).toEqual([['sala092.actualizado', urgent._id, 2], ['sala092.actualizado', normal._id, 3]])
    // Refused at write time: a filter that is none or that a stream refuses, a filter on two modules, an unknown kind or module.
    for (const body of [
      { filtro: 'nada=1' },
      // What a live stream refuses too: a standing probe on an encrypted field, a text search only the database answers.
      { filtro: 'numero_llamada=600111222' },
      { filtro: 'descripcion[contiene]=robo' },
      { filtro: 'tipo_incidencia=urgente', modulos: ['sala092', 'denuncias'] },
      { tipos: ['sala092.borrado'] },
      { tipos: ['denuncias.creado'] },
      { modulos: ['sala93'] },
      { modulos: [] },
      { rol: 'nadie' },
    ]) {
      const res = await admin.post('/suscripciones', { url: rx.url('/no'), modulos: ['sala092'], rol: 'jefe', ...body })
      expect(res.status, JSON.stringify(body)).toBe(400)
    }
  })

  it('shapes the payload by its role: withheld without descifrar, decrypted and logged as its read with it', async () => {
    const masked = await subscribe('/consulta', { rol: 'consulta' })
    const clear = await subscribe('/jefe', { rol: 'jefe' })
    const rec = ok(await admin.post('/sala092', call092()), 201)
    const [m] = await rx.waitFor('/consulta', 1)
    expect(m!.json.registro).not.toHaveProperty('numero_llamada')
    expect(m!.json.registro._restringidos).toContain('numero_llamada')
    const [c] = (await rx.waitFor('/jefe', 1)).filter((r) => r.json.registro_id === rec._id)
    expect(c!.json.registro.numero_llamada).toBe('600111222')
    const reads = ok(await admin.get(`/auditoria/lecturas?usuario=${clear.id}`))
    expect(reads.records).toEqual([expect.objectContaining({ usuario: clear.id, modulo: 'sala092', registro: rec._id, campos: ['numero_llamada'] })])
    expect(ok(await admin.get(`/auditoria/lecturas?usuario=${masked.id}`)).records).toEqual([])
  })

  it('needs suscripciones.* (403 for a role without it)', async () => {
    const { id } = await subscribe('/permiso')
    const jefe = client(app, (await newUser(app, token, 'jefe')).token)
    expect((await jefe.get('/suscripciones')).status).toBe(403)
    expect((await jefe.post('/suscripciones', { url: rx.url('/x'), modulos: ['sala092'], rol: 'jefe' })).status).toBe(403)
    expect((await jefe.get(`/suscripciones/${id}/entregas`)).status).toBe(403)
    expect((await jefe.post(`/suscripciones/${id}/reanudar`)).status).toBe(403)
    expect((await jefe.post(`/suscripciones/${id}/reproducir`, { desde: 1 })).status).toBe(403)
  })
})

describe('two instances', () => {
  it('deliver each event once between them, and the survivor delivers on when the other stops', async () => {
    const other = await h.app({ env: ENV })
    await subscribe('/dos')
    for (let i = 0; i < 6; i++) ok(await client(i % 2 === 0 ? app : other, token).post('/sala092', call092()), 201)
    const got = await rx.waitFor('/dos', 6)
    await h.closeApp(other)
    ok(await admin.post('/sala092', call092()), 201)
    // A clean stop finishes and records its attempt in flight; a lease that lapses under a loaded machine may still let the survivor send one event again (at least once, S18).
    await until('all seven events', async () => new Set(rx.at('/dos').map((r) => r.headers['webhook-id'])).size >= 7 ? true : undefined)
    const ids = rx.at('/dos').map((r) => r.headers['webhook-id'] as string)
    expect(new Set(ids).size).toBe(7)
    expect(ids.length - new Set(ids).size).toBeLessThanOrEqual(1)
    expect(got.length).toBeGreaterThanOrEqual(6)
  })
})

describe('an instance that stops cleanly', () => {
  it('lets its attempt in flight finish and records it: the next holder sends nothing twice', async () => {
    const own = await startTestApp({ env: ENV })
    try {
      rx.slow('/parada', 1_000)
      const sub = ok(await own.admin.post('/suscripciones', { url: rx.url('/parada'), modulos: ['sala092'], rol: 'jefe' }), 201)
      const first = ok(await own.admin.post('/sala092', call092()), 201)
      // The receiver has the request and answers in a second: the instance closes meanwhile.
      await rx.waitFor('/parada', 1)
      await own.h.closeApp(own.app)
      const next = await own.h.app({ env: ENV })
      const api = client(next, own.token)
      const second = ok(await api.post('/sala092', call092()), 201)
      await rx.waitFor('/parada', 2)
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(rx.at('/parada').map((r) => r.json.registro_id)).toEqual([first._id, second._id])
      const e = ok(await api.get(`/suscripciones/${sub._id}/entregas`))
      expect(e.entregas.map((a: { resultado: string }) => a.resultado)).toEqual(['entregado', 'entregado'])
    } finally {
      await own.h.close()
    }
  })
})

describe('an instance started with WEBHOOK_DELIVERY=false', () => {
  it('serves requests and takes no lease; an instance that delivers sends what it wrote', async () => {
    const quiet = await startTestApp({ env: { ...ENV, WEBHOOK_DELIVERY: 'false' } })
    try {
      const sub = ok(await quiet.admin.post('/suscripciones', { url: rx.url('/solo-api'), modulos: ['sala092'], rol: 'jefe' }), 201)
      const first = ok(await quiet.admin.post('/sala092', call092()), 201)
      // Three of its lease rounds (WEBHOOK_LEASE 2s renews every 500 ms), had it any.
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      const state = async (): Promise<{ arrendatario: string | null, posicion: string }> => (await quiet.app.orm.em.fork().getConnection().execute<Array<{ arrendatario: string | null, posicion: string }>>(
        'select arrendatario, posicion::text as posicion from sys_suscripciones_estado where suscripcion = ?', [sub._id]))[0]!
      expect(await state()).toMatchObject({ arrendatario: null })
      expect(rx.at('/solo-api')).toEqual([])
      const deliverer = await quiet.h.app({ env: ENV })
      const second = ok(await quiet.admin.post('/sala092', call092()), 201)
      const got = await rx.waitFor('/solo-api', 2)
      expect(got.map((r) => r.json.registro_id)).toEqual([first._id, second._id])
      expect((await state()).arrendatario).not.toBeNull()
      await quiet.h.closeApp(deliverer)
    } finally {
      await quiet.h.close()
    }
  })
})

describe('an instance that dies', () => {
  it('leaves its subscriptions when its lease expires: another instance delivers on, nothing skipped (at least once)', async () => {
    const { id } = await subscribe('/muerta')
    const first = ok(await admin.post('/sala092', call092()), 201)
    await rx.waitFor('/muerta', 1)
    // A holder that stopped renewing: its lease runs 1.5 s more.
    await app.orm.em.fork().getConnection().execute(
      "update sys_suscripciones_estado set arrendatario = 'muerta', arriendo_hasta = now() + interval '1500 milliseconds' where suscripcion = ?", [id])
    const during = ok(await admin.post('/sala092', call092()), 201)
    const holder = async (): Promise<string | null> => (await app.orm.em.fork().getConnection().execute<Array<{ arrendatario: string | null }>>(
      'select arrendatario from sys_suscripciones_estado where suscripcion = ?', [id]))[0]!.arrendatario
    await until('the expired lease taken over', async () => (await holder()) !== 'muerta' ? true : undefined, 15_000)
    const after = ok(await admin.post('/sala092', call092()), 201)
    const got = await until('the event written after the take-over', async () => {
      const all = rx.at('/muerta')
      return all.some((r) => r.json.registro_id === after._id) ? all : undefined
    }, 15_000)
    // Either holder may send an event twice (the old one before it noticed, the new one because the old could not move the position): at least once, in order.
    expect([...new Set(got.map((r) => r.json.registro_id))]).toEqual([first._id, during._id, after._id])
  })
})

describe('targets', () => {
  // An instance of its own that refuses private targets (the default).
  let strict: Awaited<ReturnType<typeof startTestApp>>
  beforeAll(async () => { strict = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_LEASE: '2s', WEBHOOK_RETRY_BASE: '200ms' } }) })
  afterAll(async () => { await strict?.h.close() })

  it('refuses a url whose host is not a public address, in any form (400)', async () => {
    const urls = [
      'http://127.0.0.1:8080/x', 'http://localhost/x', 'http://10.1.2.3/x', 'http://192.168.1.1/x', 'http://169.254.169.254/latest/meta-data',
      'http://0x7f.1/x', 'http://2130706433/x', 'http://0.0.0.0/x', 'http://100.64.1.1/x', 'http://100.100.100.200/x',
      'http://192.0.0.170/x', 'http://192.0.2.2/x', 'http://198.51.100.7/x', 'http://203.0.113.9/x', 'http://192.88.99.1/x', 'http://198.18.0.1/x',
      'http://224.0.0.1/x', 'http://240.0.0.1/x', 'http://255.255.255.255/x',
      'http://[::1]/x', 'http://[::]/x', 'http://[fd00:ec2::254]/x', 'http://[fe80::1]/x', 'http://[ff02::1]/x',
      'http://[::ffff:127.0.0.1]/x', 'http://[::ffff:7f00:1]/x', 'http://[::127.0.0.1]/x', 'http://[::7f00:1]/x',
      'http://[64:ff9b::7f00:1]/x', 'http://[64:ff9b::a00:1]/x', 'http://[64:ff9b:1::7f00:1]/x', 'http://[2002:7f00:1::]/x', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x',
      'http://[2001:db8::1]/x', 'http://[3fff::1]/x', 'http://[100::1]/x', 'http://[5f00::1]/x', 'http://[2001:2::1]/x',
    ]
    for (const url of urls) {
      const res = await strict.admin.post('/suscripciones', { url, modulos: ['sala092'], rol: 'jefe' })
      expect(res.status, url).toBe(400)
      expect(res.body.detalles[0].campo, url).toBe('url')
      expect(res.body.detalles[0].mensaje, url).toMatch(/no es pública/)
    }
    for (const url of ['ftp://example.org/x', 'http://nombre-que-no-existe.invalid/x']) {
      const res = await strict.admin.post('/suscripciones', { url, modulos: ['sala092'], rol: 'jefe' })
      expect(res.status, url).toBe(400)
      expect(res.body.detalles[0].campo, url).toBe('url')
    }
  })

  it('checks the address again when it delivers: a target that is not public is not connected to, by name or by address', async () => {
    // This machine's own non-loopback IPv4 addresses (a documentation one on some test machines) get a receiver each.
    const own = Object.values(networkInterfaces()).flat().filter((i) => i !== undefined && i.family === 'IPv4' && !i.internal).map((i) => i!.address)
    const others = await Promise.all(own.map(async (address) => startReceiver(address)))
    try {
      // Written where private targets are allowed, delivered where they are not.
      await strict.h.closeApp(strict.app)
      const lax = await strict.h.app({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_LEASE: '2s' } })
      const laxAdmin = client(lax, strict.token)
      const targets: Array<{ url: string, error: string }> = [
        { url: rx.url('/privada'), error: 'la dirección 127.0.0.1 no es pública' },
        { url: `http://localhost:${rx.port}/nombre`, error: 'el nombre "localhost" resuelve a una dirección que no es pública' },
        { url: `http://[::ffff:7f00:1]:${rx.port}/mapeada`, error: 'la dirección ::ffff:7f00:1 no es pública' },
        ...others.map((o, i) => ({ url: o.url('/propia'), error: `la dirección ${own[i]!} no es pública` })),
      ]
      const subs = []
      for (const t of targets) subs.push({ ...t, id: ok(await laxAdmin.post('/suscripciones', { url: t.url, modulos: ['sala092'], rol: 'jefe' }), 201)._id as string })
      await strict.h.closeApp(lax)
      const app2 = await strict.h.app({ env: { WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_LEASE: '2s', WEBHOOK_RETRY_BASE: '200ms' } })
      const api = client(app2, strict.token)
      ok(await api.post('/sala092', call092()), 201)
      for (const sub of subs) {
        const failed = await until(`a refused attempt to ${sub.url}`, async () => {
          const e = ok(await api.get(`/suscripciones/${sub.id}/entregas`))
          return e.entregas.length > 0 ? e.entregas : undefined
        })
        expect(failed[0], sub.url).toMatchObject({ estado: null, resultado: 'reintento', error: sub.error })
      }
      expect([...rx.at('/privada'), ...rx.at('/nombre'), ...rx.at('/mapeada'), ...others.flatMap((o) => o.at('/propia'))]).toEqual([])
    } finally {
      for (const o of others) await o.close()
    }
  })
})
