/**
 * Requests over a real connection, for what app.inject cannot show: an
 * answer cut short (a destroyed socket), a body sent slowly. The app
 * listens on a free port below 32768 (test/helpers/free-port.ts `listenApp`).
 */
import { request as httpRequest } from 'node:http'

/** What arrived: the status, headers, the body's bytes, and whether the body ended cleanly (not cut). */
export interface WireAnswer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: Buffer
  /** The answer ended as HTTP says (its whole Content-Length, or its last chunk), not by a dropped connection. */
  readonly complete: boolean
  /** The request failed before an answer began (the connection dropped). */
  readonly failed?: string
}

export interface WireRequest {
  readonly method?: string
  readonly path: string
  readonly headers?: Record<string, string>
  /** Sent in these pieces, `gapMs` apart (a slow client); `onPiece(i)` after each is written. */
  readonly pieces?: readonly Buffer[]
  readonly gapMs?: number
  readonly onPiece?: (i: number) => Promise<void> | void
}

export async function wire (port: number, r: WireRequest): Promise<WireAnswer> {
  return new Promise((resolve) => {
    let settled = false
    // An answer that came before the whole body was sent (a 503 mid-upload): the rest is not sent, the connection closed.
    const settle = (a: WireAnswer): void => { if (!settled) { settled = true; resolve(a); if (!req.writableEnded) req.destroy() } }
    // A connection of its own (no keep-alive pool): one request never waits behind another's unread body.
    const req = httpRequest({ host: '127.0.0.1', port, method: r.method ?? 'GET', path: r.path, headers: r.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => { chunks.push(c) })
      const done = (): void => { settle({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }) }
      res.on('end', done)
      res.on('error', done)
      res.on('close', done)
    })
    req.on('error', (err) => { settle({ status: 0, headers: {}, body: Buffer.alloc(0), complete: false, failed: (err as NodeJS.ErrnoException).code ?? err.message }) })
    const send = async (): Promise<void> => {
      const pieces = r.pieces ?? []
      for (let i = 0; i < pieces.length; i++) {
        if (req.destroyed || settled) return
        req.write(pieces[i])
        await r.onPiece?.(i)
        if (i < pieces.length - 1 && (r.gapMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, r.gapMs))
      }
      req.end()
    }
    void send()
  })
}
