/**
 * A streamed body (an upload, an import) refused before its end: the rest
 * is read and dropped, so the refusal reaches a client that is still
 * sending. A connection closed over unread bytes is reset, and the reset
 * can take the answer with it before the client reads it; so the
 * connection stays open while the rest arrives, up to DRAIN_BYTES or
 * DRAIN_MS (a client that reads its answer has stopped by then), and only
 * then is it closed (docs/user-guide.md "Import (importar)").
 *
 * A client that asked for the connection to close (`Connection: close`,
 * as every request of Node's http module without an agent) would lose it
 * anyway: Node ends such a connection right after the answer and destroys
 * it, over the bytes still unread. So the close lingers (RFC 9112 §9.6):
 * the answer and its FIN go out, and the connection is destroyed only when
 * the client has closed its side or the window is over.
 */
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

const DRAIN_BYTES = 8 * 1024 * 1024
const DRAIN_MS = 2_000

export function dropRestOfBody (raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed || raw.readableEnded) return
  raw.unpipe()
  const socket = raw.socket
  // Node's server calls destroySoon() after the last answer of a connection (node:net: end, then destroy once written).
  let lingering = false
  if (socket !== null) socket.destroySoon = function (this: Socket) { lingering = true; this.end() }
  let dropped = 0
  const stop = (): void => {
    clearTimeout(timer)
    socket?.destroy()
  }
  const timer = setTimeout(stop, DRAIN_MS)
  timer.unref()
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > DRAIN_BYTES) stop()
  })
  const closed = (): void => { clearTimeout(timer) }
  socket?.once('close', closed)
  raw.once('end', () => {
    // Lingering, it waits for the client to close. Else the body is in: the connection serves its next request as any other.
    if (lingering) return
    clearTimeout(timer)
    if (socket === null) return
    socket.off('close', closed)
    Reflect.deleteProperty(socket, 'destroySoon')
  })
  raw.resume()
}
