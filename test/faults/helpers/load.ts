/**
 * A load generator for the fault scenarios: `concurrency` workers, each on
 * its own keep-alive connection, send requests one after another until
 * `total` are done or `stop()` is called, and every answer is kept:
 * status, the created id, and when it arrived. Nothing is retried.
 */
import { Agent, request } from 'node:http'

export interface Answer {
  readonly kind: string
  /** HTTP status; 0 when no answer came (connection error, timeout). */
  readonly status: number
  /** `_id` of a created record (2xx answers to a create). */
  readonly id?: string
  readonly at: number
}

export interface Call {
  kind: string
  method: 'GET' | 'POST'
  path: string
  body?: unknown
}

export interface Load {
  readonly answers: Answer[]
  stop (): void
  /** Resolves when every worker has finished. */
  readonly done: Promise<Answer[]>
}

function send (agent: Agent, base: URL, token: string, call: Call): Promise<{ status: number, body: string }> {
  return new Promise((resolve) => {
    const payload = call.body === undefined ? undefined : JSON.stringify(call.body)
    const req = request({
      agent,
      host: base.hostname,
      port: base.port,
      method: call.method,
      path: call.path,
      timeout: 60_000,
      headers: { authorization: `Bearer ${token}`, ...(payload !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
    }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => { body += d })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
      res.on('error', () => { resolve({ status: 0, body: '' }) })
    })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', () => { resolve({ status: 0, body: '' }) })
    req.end(payload)
  })
}

export function startLoad (opts: { url: string, token: string, concurrency: number, total?: number, next: (i: number) => Call }): Load {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency })
  const base = new URL(opts.url)
  const answers: Answer[] = []
  let issued = 0
  let stopped = false
  const worker = async (): Promise<void> => {
    while (!stopped && (opts.total === undefined || issued < opts.total)) {
      const call = opts.next(issued++)
      const { status, body } = await send(agent, base, opts.token, call)
      let id: string | undefined
      if (call.method === 'POST' && status >= 200 && status < 300) {
        try { id = (JSON.parse(body) as { data: { _id: string } }).data._id } catch { /* counted without id */ }
      }
      answers.push({ kind: call.kind, status, ...(id !== undefined && { id }), at: Date.now() })
    }
  }
  const done = Promise.all(Array.from({ length: opts.concurrency }, worker)).then(() => { agent.destroy(); return answers })
  return { answers, stop () { stopped = true }, done }
}

/** Answers counted by kind and status class, for the log and the assertions. */
export function tally (answers: readonly Answer[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {}
  for (const a of answers) {
    const byStatus = (out[a.kind] ??= {})
    byStatus[String(a.status)] = (byStatus[String(a.status)] ?? 0) + 1
  }
  return out
}
