/**
 * HTTP that Node cannot parse is answered in the service's error envelope
 * (docs/user-guide.md "Errors"): a broken request line, a broken header, a bad
 * Content-Length or chunk → 400 `Petición HTTP mal formada`; headers past
 * Node's 16 KiB → 431 `Cabeceras demasiado grandes`. Sent as raw bytes over
 * a TCP socket to a listening app, and to the starting server that answers
 * while the app is not built yet (http/starting-server.ts).
 */
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { errorOf } from '../helpers/errors.js'
import { startingServer, type StartingServer } from '../../http/starting-server.js'
import { listenApp, listenFree } from '../helpers/free-port.js'
import { createServer } from 'node:http'
import { answerClientError } from '../../http/client-error.js'

let h: Harness
let app: FastifyInstance
let port: number
let starting: StartingServer
let startingPort: number

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  port = Number(new URL(await listenApp(app)).port)
  starting = startingServer(0, '127.0.0.1', 75_000)
  await starting.listen()
  startingPort = (starting.server.address() as { port: number }).port
})
afterAll(async () => {
  await starting?.drain(100)
  await h?.close()
})

interface RawAnswer { status: number, headers: Record<string, string>, body: unknown }

/** Raw bytes to a listening server; the answer parsed by hand (no HTTP client would send these). */
async function raw (to: number, text: string): Promise<RawAnswer> {
  const answer = await new Promise<string>((resolve) => {
    const socket = connect(to, '127.0.0.1', () => { socket.write(text) })
    let got = ''
    socket.on('data', (d) => { got += String(d) })
    socket.on('close', () => { resolve(got) })
    socket.on('error', () => { resolve(got) })
  })
  const [head = '', ...rest] = answer.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  const content = rest.join('\r\n\r\n')
  let body: unknown = content
  try { body = JSON.parse(content) } catch { /* shown as text */ }
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0), headers, body }
}

const MALFORMED = errorOf('PETICION_MAL_FORMADA')
const TOO_BIG = errorOf('CABECERAS_DEMASIADO_GRANDES')
const cases: Array<[string, number, string, unknown]> = [
  ['a request line that is not HTTP', 400, 'HELLO THERE\r\n\r\n', MALFORMED],
  ['a method with a space in it', 400, 'GE T /health HTTP/1.1\r\nHost: x\r\n\r\n', MALFORMED],
  ['a header name with a control character', 400, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad\u0001: 1\r\n\r\n', MALFORMED],
  ['a Content-Length that is no number', 400, 'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1x\r\n\r\n{}', MALFORMED],
  ['headers past 16 KiB', 431, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, TOO_BIG],
]
// Only where the body is read: the starting server answers 503 on the
// headers, before a broken body arrives, and the connection then just closes.
const brokenChunk: [string, number, string, unknown] = ['a broken chunk', 400, 'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', MALFORMED]

describe.each([
  ['the app', () => port, [...cases, brokenChunk]],
  ['the starting server', () => startingPort, cases],
] as const)('raw HTTP that does not parse, to %s', (_name, to, list) => {
  it.each(list)('%s → %i in the envelope, and the connection closes', async (_case, status, text, body) => {
    const res = await raw(to(), text)
    expect({ status: res.status, body: res.body }).toEqual({ status, body })
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers.connection).toBe('close')
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(body)))
  })
})

describe('a request that parses', () => {
  it('is served as usual on the same listener', async () => {
    const res = await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(res.status).toBe(200)
  })
})

describe('a request that stops arriving', () => {
  // The service's server waits 60 s for headers and 15 min for a whole request (http/starting-server.ts);
  // the same answer on a server that waits half a second.
  it('→ 408 Tiempo de espera agotado in the envelope, and the connection closes', async () => {
    const server = createServer({ requestTimeout: 500, headersTimeout: 500, connectionsCheckingInterval: 100 }, (req, res) => { req.resume(); req.on('end', () => { res.end() }) })
    server.on('clientError', (err, socket) => { answerClientError(err, socket) })
    try {
      const slow = await listenFree(server)
      const res = await raw(slow, 'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"username":')
      expect({ status: res.status, body: res.body }).toEqual({ status: 408, body: errorOf('TIEMPO_AGOTADO') })
      expect(res.headers.connection).toBe('close')
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    } finally {
      server.close()
    }
  })
})
