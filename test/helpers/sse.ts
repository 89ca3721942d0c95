/**
 * A server-sent events client for tests (docs/user-guide.md "Events: the
 * live stream (eventos)"): node:http on a listening server, since
 * app.inject does not stream. Messages are parsed as a browser's
 * EventSource reads them (`id`, `event`, `data` as JSON; `:` comments).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'

export interface Message { id?: string, event?: string, data?: any }

/** A stream as a client sees it. */
export interface Sse {
  status: number
  headers: IncomingMessage['headers']
  /** The JSON body of a refusal. */
  body?: any
  messages: Message[]
  comments: string[]
  /** Resolves when the server closes the stream. */
  ended: Promise<void>
  /** The next message (after those already taken) matching `pred`, within `ms`. */
  next (pred?: (m: Message) => boolean, ms?: number): Promise<Message>
  close (): void
}

/**
 * Opens `path` on the listening server at `base` with `token`; resolves
 * once the answer's head arrived: a refusal with its JSON body, or the
 * stream, parsed as it comes.
 */
export function openStream (base: string, path: string, token: string, headers: Record<string, string> = {}): Promise<Sse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8')
      const messages: Message[] = []
      const comments: string[] = []
      let taken = 0
      let buffer = ''
      let wake: (() => void) | undefined
      let ended = false
      const endedP = new Promise<void>((done) => { res.on('close', () => { ended = true; wake?.(); done() }) })
      if (res.statusCode !== 200) {
        let text = ''
        res.on('data', (c: string) => { text += c })
        res.on('end', () => { resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text), messages, comments, ended: endedP, next: async () => { throw new Error('no stream') }, close: () => req.destroy() }) })
        return
      }
      res.on('data', (chunk: string) => {
        buffer += chunk
        let i: number
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, i)
          buffer = buffer.slice(i + 2)
          const m: Message = {}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) { comments.push(line.slice(1).trim()); continue }
            const [field, ...rest] = line.split(': ')
            const value = rest.join(': ')
            if (field === 'id') m.id = value
            else if (field === 'event') m.event = value
            else if (field === 'data') m.data = JSON.parse(value)
          }
          if (m.event !== undefined) messages.push(m)
        }
        wake?.()
      })
      resolve({
        status: 200,
        headers: res.headers,
        messages,
        comments,
        ended: endedP,
        // 30 s: an event is sent once the sealer has placed its history entry, and the sealer waits for the
        // oldest writing transaction of the whole PostgreSQL cluster (docs/operator-guide.md "Tamper evidence:
        // the global chain and checkpoints"), which another test file's import or index build may hold for seconds.
        async next (pred = () => true, ms = 30_000) {
          const deadline = Date.now() + ms
          for (;;) {
            const at = messages.findIndex((m, k) => k >= taken && pred(m))
            if (at >= 0) { taken = at + 1; return messages[at]! }
            const left = deadline - Date.now()
            if (left <= 0 || ended) throw new Error(`no matching message within ${ms} ms; got ${JSON.stringify(messages.slice(taken).map((m) => [m.id, m.event]))}`)
            await new Promise<void>((r) => { wake = r; setTimeout(r, Math.min(left, 100)) })
          }
        },
        close: () => { req.destroy() },
      })
    })
    req.on('error', (err) => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err) })
    req.end()
  })
}

