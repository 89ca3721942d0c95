/**
 * Logs hold no secret (docs/operator-guide.md "Logs"): an app at
 * LOG_LEVEL=trace writes its log to a capture stream while it is sent
 * logins (right and wrong password, malformed JSON holding a password),
 * bearer tokens, creates, updates and filters carrying DNIs and NIFs
 * (plain, percent-encoded names, operators), malformed and non-UTF-8 bodies
 * holding a DNI, free-text searches (`q`, `[contiene]`), a password typed
 * as a username, and raw HTTP requests that fail to parse (Node hands their
 * bytes to the log as `rawPacket`). No secret string may appear in any line.
 */
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadRegistry } from '../../core/registry/load.js'
import { ADMIN, type Harness } from '../helpers/app.js'
import { call, refOrder, sampleBody, validDni } from '../helpers/http.js'
import { startTestApp } from '../helpers/test-app.js'
import { listenApp } from '../helpers/free-port.js'

const registry = loadRegistry('modules.yaml')
const mod = (name: string) => registry.byName.get(name)!

let h: Harness, app: FastifyInstance
const lines: string[] = []
const capture = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
/** Every secret sent in this file: none may reach the log. */
const secrets: string[] = [ADMIN.password]
const refs = new Map<string, string>()
let token: string

beforeAll(async () => {
  ({ h, app, token } = await startTestApp({ env: { LOG_LEVEL: 'trace' }, logStream: capture }))
  secrets.push(token, token.split('.')[2]!)
  for (const m of refOrder(registry)) {
    if (m.name === 'usuarios') continue
    const res = await call(app, 'POST', `/${m.path}`, { token, body: sampleBody(m, refs) })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    refs.set(m.name, res.body.data._id)
  }
})
afterAll(async () => { await h?.close() })

/**
 * The log as text, with every serialised Buffer (`{type: "Buffer", data:
 * [bytes]}`, how pino writes Node's `rawPacket`) decoded, so secrets held as
 * bytes are found too.
 */
function readable (text: string): string {
  const out: string[] = [text]
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return
    const o = v as Record<string, unknown>
    if (o.type === 'Buffer' && Array.isArray(o.data)) out.push(Buffer.from(o.data as number[]).toString('latin1'))
    for (const x of Object.values(o)) walk(x)
  }
  for (const line of text.split('\n')) if (line.trim() !== '') walk(JSON.parse(line))
  return out.join('\n')
}

/** Raw bytes to a listening server, as a client that cannot write HTTP would send them. */
async function rawRequest (port: number, text: string): Promise<string> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => { socket.end(text) })
    let answer = ''
    socket.on('data', (d) => { answer += String(d) })
    socket.on('close', () => { resolve(answer) })
    socket.on('error', () => { resolve(answer) })
  })
}

describe('log lines at trace level', () => {
  it('hold no password, token or encrypted value, also for requests that fail to parse', async () => {
    const json = { 'content-type': 'application/json' }
    // Logins: right password (beforeAll), wrong password, malformed JSON holding a password.
    secrets.push('Clave-Equivocada-4821', 'Secreto-Roto-7730', 'Secreto-Utf8-5519')
    expect((await call(app, 'POST', '/auth/login', { body: { username: ADMIN.username, password: 'Clave-Equivocada-4821' } })).status).toBe(401)
    expect((await call(app, 'POST', '/auth/login', { raw: `{"username":"admin","password":"Secreto-Roto-7730",}`, headers: json })).status).toBe(400)
    const badUtf8 = Buffer.concat([Buffer.from('{"username":"admin","password":"Secreto-Utf8-5519\xff"}', 'latin1')])
    expect((await app.inject({ method: 'POST', url: '/auth/login', headers: json, payload: badUtf8 })).statusCode).toBe(400)

    // Encrypted values in creates, updates, filters (plain, encoded names, operators) and broken bodies.
    const dni = (n: number): string => validDni(70_000_000 + n)
    const [d1, d2, d3, d4, d5, d6, d7, d8, d9] = Array.from({ length: 9 }, (_, i) => dni(i + 1))
    secrets.push(d1!, d2!, d3!, d4!, d5!, d6!, d7!, d8!, d9!)
    const den = await call(app, 'POST', '/denuncias', { token, body: { ...sampleBody(mod('denuncias'), refs), denunciante_dni: d1, denunciante_telefono: '699123457', denunciante_domicilio: 'Calle Secreta 17' } })
    expect(den.status, JSON.stringify(den.body)).toBe(201)
    secrets.push('699123457', 'Calle Secreta 17')
    expect((await call(app, 'PUT', `/denuncias/${den.body.data._id as string}`, { token, body: { denunciante_dni: d2 } })).status).toBe(200)
    expect((await call(app, 'POST', '/sanciones', { token, body: { ...sampleBody(mod('sanciones'), refs), infractor_dni: d3 } })).status).toBe(201)
    expect((await call(app, 'POST', '/personal', { token, body: { ...sampleBody(mod('personal'), refs), nif: d4 } })).status).toBe(201)
    for (const url of [
      `/denuncias?denunciante_dni=${d1}`,
      `/denuncias?denunciante%5Fdni=${d2}&estado=pendiente`,
      `/denuncias?denunciante_dni%5Bin%5D=${d1},${d2}`,
      `/sanciones?infractor_dni[in]=${d3}`,
      `/personal?limit=5&nif=${d4}&sort=-_created`,
      `/personal?%6Eif=${d4}`,
    ]) expect((await call(app, 'GET', url, { token })).status, url).toBe(200)
    expect((await call(app, 'GET', `/denuncias?denunciante_dni[contiene]=${d5}`, { token })).status).toBe(400)
    expect((await call(app, 'POST', '/denuncias', { token, raw: `{"denunciante_dni":"${d6}" "x":1}`, headers: json })).status).toBe(400)
    expect((await app.inject({ method: 'POST', url: '/denuncias', headers: { ...json, authorization: `Bearer ${token}` }, payload: Buffer.from(`{"denunciante_dni":"${d7}\xfe"}`, 'latin1') })).statusCode).toBe(400)
    expect((await call(app, 'POST', '/denuncias', { token, raw: `denunciante_dni=${d8}`, headers: { 'content-type': 'text/plain' } })).status).toBe(415)

    // Free text a person typed (docs/operator-guide.md "Logs"): `q` and `[contiene]`, plain, encoded, inside a group;
    // and a password typed into the username box (no such user: no username logged).
    secrets.push('Texto-Libre-3391', 'Bici-Roja-4410', 'Codificada-5521', 'Grupo-6632', 'Mayus-7701', 'Clave-En-Usuario-7743')
    for (const [url, status] of [
      ['/denuncias?q=Texto-Libre-3391&limit=5', 200],
      ['/denuncias?descripcion[contiene]=Bici-Roja-4410', 200],
      ['/denuncias?descripcion%5Bcontiene%5D=Codificada-5521', 200],
      ['/denuncias?o[0][descripcion][contiene]=Grupo-6632', 400],
      ['/denuncias?Q=Mayus-7701', 400],
    ] as const) expect((await call(app, 'GET', url, { token })).status, url).toBe(status)
    expect((await call(app, 'POST', '/auth/login', { body: { username: 'Clave-En-Usuario-7743', password: 'x' } })).status).toBe(401)

    // A password and a token in a query string, and a new user's password in a body.
    secrets.push('usuario-clave-9931', 'Param-Clave-1177')
    expect((await call(app, 'POST', '/usuarios', { token, body: { username: 'registro-log', password: 'usuario-clave-9931', nombre: 'Registro', rol: 'consulta' } })).status).toBe(201)
    expect((await call(app, 'GET', `/usuarios?password=Param-Clave-1177&token=${token}`, { token })).status).toBe(400)

    // Raw HTTP that does not parse: Node logs the packet (headers and body) at trace.
    await listenApp(app)
    const port = (app.server.address() as { port: number }).port
    const body = `{"username":"admin","password":"${ADMIN.password}","dni":"${d9}"}`
    for (const head of [
      `POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1x\r\n\r\n${body}`,
      `POST /denuncias HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${body}\r\n0\r\n\r\n`,
      `GET /denuncias?denunciante_dni=${d9} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Bad\u0001: ${d9}\r\n\r\n`,
    ]) expect(await rawRequest(port, head)).toMatch(/^HTTP\/1\.1 400/)

    await new Promise((resolve) => setTimeout(resolve, 50))
    const log = readable(lines.join(''))
    // The test sees what it means to: requests, hidden filter values, and the parse failures.
    expect(log).toContain('"msg":"incoming request"')
    expect(log).toContain('/denuncias?denunciante_dni=[oculto]')
    expect(log).toContain('/personal?limit=5&nif=[oculto]&sort=-_created')
    expect(log).toContain('/usuarios?password=[oculto]&token=[oculto]')
    expect(log).toContain('/denuncias?q=[oculto]&limit=5')
    expect(log).toContain('/denuncias?descripcion[contiene]=[oculto]')
    expect(log).toContain('"msg":"login failed"')
    expect(log.match(/"msg":"client error"/g)?.length).toBe(3)
    for (const s of secrets) {
      const at = log.indexOf(s)
      expect(at, `${s} is in the log: …${log.slice(Math.max(0, at - 200), at + 100)}…`).toBe(-1)
    }
  })
})
