/**
 * Requests Node cannot parse (docs/user-guide.md "Errors"): a broken request line or header,
 * a bad Content-Length or chunk, headers past Node's limit (16 KiB), a
 * request that never finished arriving. No route sees them, so they are
 * answered here, on the raw socket, in the service's error envelope: 400
 * `Petición HTTP mal formada`, 431 `Cabeceras demasiado grandes`, 408
 * `Tiempo de espera agotado`; then the connection is closed. Used as
 * Fastify's `clientErrorHandler` (app.ts) and by the starting server
 * before the app serves (starting-server.ts).
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { ERRORS, type ErrorCode } from '../core/errors.js'
import { errorBody } from './errors.js'

interface ClientError extends Error { code?: string }
interface TraceLog { trace (obj: object, msg: string): void }

export function clientErrorCode (err: ClientError): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'CABECERAS_DEMASIADO_GRANDES'
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'TIEMPO_AGOTADO'
  return 'PETICION_MAL_FORMADA'
}

export function answerClientError (err: ClientError, socket: Duplex, log?: TraceLog): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  // Logged as the error serializer allows (http/log-options.ts: never the raw bytes).
  log?.trace({ err }, 'client error')
  const code = clientErrorCode(err)
  const status = ERRORS[code].status
  // As Fastify's own default handler: public socket state only (node:http
  // keeps whether a response is under way in a private field, not read here).
  if (socket.writable) {
    const body = JSON.stringify(errorBody(code))
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      // Every answer names a request id (docs/user-guide.md "The document is the contract"); one that did not parse sent none to keep.
      `X-Request-Id: ${randomUUID()}\r\n` +
      'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
      body)
  }
  socket.destroy()
}
