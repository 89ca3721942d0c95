/**
 * The public port while the service starts (docs/operator-guide.md "Start-up waits for PostgreSQL and Redis"): when PostgreSQL or
 * Redis is not reachable yet, bin/server.ts listens while it waits, so that
 * an orchestrator sees a live process that is not ready yet (a start that
 * need not wait listens once the app is built, so a client that waits for
 * /health finds the API ready). Until the app is
 * built, `GET /health` answers 200, `GET /ready` and every other request
 * 503 `Servicio no disponible` (nothing can be served without the
 * database). Then the app's own handler takes over on the same server, and
 * on shutdown new requests get 503 with `Connection: close` while the ones
 * in flight finish. Requests that do not parse are answered in the error
 * envelope (client-error.ts), by this server until the app serves.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import { DEPENDENCY_RETRY_AFTER_S, errorBody } from './errors.js'
import { answerClientError } from './client-error.js'

export interface StartingServer {
  readonly server: Server
  /** Listens on HOST:PORT (once; later calls wait for the same listen). */
  listen (): Promise<void>
  /** Hands every later request to the app (its Fastify handler). */
  serve (handler: RequestListener): void
  /** Stops accepting, answers new requests 503, waits (up to timeoutMs) for those in flight. */
  drain (timeoutMs: number): Promise<void>
}

function send (res: ServerResponse, status: number, body: unknown, close = false): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...(close && { connection: 'close' }) })
  res.end(JSON.stringify(body))
}

const unavailable = errorBody('SERVICIO_NO_DISPONIBLE')

function starting (req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '').split('?')[0]
  if (req.method === 'GET' && path === '/health') send(res, 200, { success: true, data: { status: 'ok' } })
  else {
    // The app is seconds away (bin/server.ts): the same advice as a dependency down (http/errors.ts).
    res.setHeader('retry-after', String(DEPENDENCY_RETRY_AFTER_S))
    send(res, 503, unavailable)
  }
}

/**
 * How long a whole request may take to arrive: a 50 MB upload or import
 * streamed from a slow client (node's default, 5 minutes, would cut it).
 */
export const REQUEST_TIMEOUT_MS = 15 * 60_000

/**
 * The server, not yet listening: bin/server.ts listens when the start has to wait, or once the app is built.
 * `keepAliveTimeoutMs` (KEEP_ALIVE_TIMEOUT): an idle connection outlives the proxy's idle upstream
 * timeout, so nginx never sends a request on a connection the service is closing
 * (docs/operator-guide.md "nginx in front"); node's own default is 5 s.
 */
export function startingServer (port: number, host: string, keepAliveTimeoutMs: number): StartingServer {
  let handler: RequestListener = starting
  let closing = false
  const server = createServer((req, res) => {
    if (closing) { send(res, 503, unavailable, true); return }
    handler(req, res)
  })
  server.keepAliveTimeout = keepAliveTimeoutMs
  server.requestTimeout = REQUEST_TIMEOUT_MS
  // Until then: the app's Fastify answers them itself (its clientErrorHandler).
  server.on('clientError', (err: Error, socket) => { if (handler === starting) answerClientError(err, socket) })
  let listening: Promise<void> | undefined
  return {
    server,
    async listen () {
      listening ??= new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => { server.off('error', reject); resolve() })
      })
      await listening
    },
    serve (h) { handler = h },
    async drain (timeoutMs) {
      closing = true
      const closed = new Promise<void>((resolve) => { server.close(() => { resolve() }) })
      // A keep-alive connection turns idle when its last response is sent.
      const sweep = setInterval(() => { server.closeIdleConnections() }, 100)
      server.closeIdleConnections()
      const timer = new Promise<void>((resolve) => { setTimeout(resolve, timeoutMs).unref() })
      await Promise.race([closed, timer])
      clearInterval(sweep)
      server.closeAllConnections()
    },
  }
}
