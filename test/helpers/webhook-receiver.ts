/**
 * A real HTTP receiver of webhooks on 127.0.0.1 (or another local IPv4
 * address; a free port), for the
 * delivery tests: it keeps every request by path, answers each path with
 * the statuses queued for it (then 200), and lets a test wait for a count.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { listenFree } from './free-port.js'

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly json: any
}

export interface Receiver {
  readonly port: number
  /** `http://127.0.0.1:<port><path>` (its own host) */
  url (path: string): string
  /** Requests received on `path`, in arrival order (the failed ones too). */
  at (path: string): Received[]
  /** Answers the next requests on `path` with these statuses, in order (0: never answers). */
  answer (path: string, ...statuses: number[]): void
  /** Answers every request on `path` with `status` until told otherwise (undefined: 200). */
  always (path: string, status: number | undefined): void
  /** Answers every request on `path` only after `ms`. */
  slow (path: string, ms: number): void
  /** Waits until `path` has received at least `n` requests (fails after `ms`). */
  waitFor (path: string, n: number, ms?: number): Promise<Received[]>
  close (): Promise<void>
}

export async function startReceiver (host = '127.0.0.1'): Promise<Receiver> {
  const log = new Map<string, Received[]>()
  const queued = new Map<string, number[]>()
  const fixed = new Map<string, number>()
  const delays = new Map<string, number>()
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? '/'
      const body = Buffer.concat(chunks).toString('utf8')
      let json: unknown
      try { json = JSON.parse(body) } catch { json = undefined }
      const list = log.get(path) ?? []
      list.push({ path, headers: req.headers, body, json })
      log.set(path, list)
      const status = queued.get(path)?.shift() ?? fixed.get(path) ?? 200
      // 0: no answer at all (the connection stays open until the receiver closes).
      if (status === 0) return
      const answer = (): void => { res.writeHead(status, { 'content-type': 'text/plain' }).end('ok') }
      const ms = delays.get(path)
      if (ms === undefined) answer(); else setTimeout(answer, ms)
    })
  })
  const port = await listenFree(server, host)
  const at = (path: string): Received[] => [...(log.get(path) ?? [])]
  return {
    port,
    url: (path) => `http://${host}:${port}${path}`,
    at,
    answer: (path, ...statuses) => { queued.set(path, [...(queued.get(path) ?? []), ...statuses]) },
    always: (path, status) => { if (status === undefined) fixed.delete(path); else fixed.set(path, status) },
    slow: (path, ms) => { delays.set(path, ms) },
    async waitFor (path, n, ms = 20_000) {
      const until = Date.now() + ms
      while (at(path).length < n) {
        if (Date.now() > until) throw new Error(`${path}: ${at(path).length} of ${n} requests after ${ms} ms`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      return at(path)
    },
    async close () {
      server.closeAllConnections()
      await new Promise((resolve) => { server.close(resolve) })
    },
  }
}
