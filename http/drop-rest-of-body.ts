/**
 * A streamed body (an upload, an import) refused before its end: the rest
 * is read and dropped, so the refusal reaches a client that is still
 * sending. A connection closed over unread bytes is reset, and the reset
 * can take the answer with it before the client reads it; so the
 * connection stays open while the rest arrives, up to DRAIN_BYTES or
 * DRAIN_MS (a client that reads its answer has stopped by then), and only
 * then is it closed (docs/user-guide.md "Import (importar)").
 */
import type { IncomingMessage } from 'node:http'

const DRAIN_BYTES = 8 * 1024 * 1024
const DRAIN_MS = 2_000

export function dropRestOfBody (raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed || raw.readableEnded) return
  raw.unpipe()
  let dropped = 0
  const stop = (): void => {
    clearTimeout(timer)
    raw.socket?.destroy()
  }
  const timer = setTimeout(stop, DRAIN_MS)
  timer.unref()
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > DRAIN_BYTES) stop()
  })
  raw.once('end', () => { clearTimeout(timer) })
  raw.once('close', () => { clearTimeout(timer) })
  raw.resume()
}
