/**
 * A client that records every acknowledgement, for the failover scenarios
 * (docs/operations.md "High availability"): `concurrency` workers on their
 * own keep-alive connections, each creating 092 calls and updating its
 * latest one with `If-Match` (the version its last 2xx answered; after a
 * 409 or a failed answer it reads the record first). Nothing is retried
 * blindly. `check` then asks the database for every acknowledged create
 * and every acknowledged version.
 */
import { Agent, request } from 'node:http'

export interface Ack {
  readonly kind: 'create' | 'update' | 'read'
  /** HTTP status; 0 when no answer came (connection error, timeout). */
  readonly status: number
  readonly id?: string
  /** The version a 2xx create or update answered. */
  readonly version?: number
  readonly sent: number
  readonly at: number
}

export interface AckLoad {
  readonly acks: Ack[]
  stop (): void
  readonly done: Promise<Ack[]>
}

interface Answer { status: number, body: any }

function send (agent: Agent, base: URL, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = request({
      agent,
      host: base.hostname,
      port: base.port,
      method,
      path,
      timeout: 60_000,
      headers: { authorization: `Bearer ${token}`, ...headers, ...(payload !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
    }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => { text += d })
      res.on('end', () => {
        let parsed: unknown
        try { parsed = JSON.parse(text) } catch { /* a gateway page */ }
        resolve({ status: res.statusCode ?? 0, body: parsed })
      })
      res.on('error', () => { resolve({ status: 0, body: undefined }) })
    })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', () => { resolve({ status: 0, body: undefined }) })
    req.end(payload)
  })
}

const ok = (status: number): boolean => status >= 200 && status < 300

export function startAckLoad (opts: { url: string, token: string, concurrency: number }): AckLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency })
  const base = new URL(opts.url)
  const acks: Ack[] = []
  let stopped = false
  const worker = async (w: number): Promise<void> => {
    let mine: { id: string, version: number | undefined } | undefined
    for (let i = 0; !stopped; i++) {
      const sent = Date.now()
      if (mine === undefined || i % 2 === 0) {
        const r = await send(agent, base, opts.token, 'POST', '/sala092', { tipo_incidencia: 'normal', descripcion: `trabajador ${w} llamada ${i}` })
        const id = ok(r.status) ? r.body?.data?._id as string | undefined : undefined
        acks.push({ kind: 'create', status: r.status, ...(id !== undefined && { id, version: Number(r.body.data._version) }), sent, at: Date.now() })
        if (id !== undefined) mine = { id, version: Number(r.body.data._version) }
      } else if (mine.version === undefined) {
        const r = await send(agent, base, opts.token, 'GET', `/sala092/${mine.id}`)
        acks.push({ kind: 'read', status: r.status, id: mine.id, sent, at: Date.now() })
        if (ok(r.status)) mine.version = Number(r.body.data._version)
      } else {
        const r = await send(agent, base, opts.token, 'PUT', `/sala092/${mine.id}`, { descripcion: `trabajador ${w} cambio ${i}` }, { 'if-match': `"${mine.version}"` })
        const version = ok(r.status) ? Number(r.body.data._version) : undefined
        acks.push({ kind: 'update', status: r.status, id: mine.id, ...(version !== undefined && { version }), sent, at: Date.now() })
        mine.version = version
      }
    }
  }
  const done = Promise.all(Array.from({ length: opts.concurrency }, async (_, w) => worker(w))).then(() => { agent.destroy(); return acks })
  return { acks, stop () { stopped = true }, done }
}

export interface AckFigures {
  answers: number
  byStatus: Record<string, number>
  acknowledgedCreates: number
  acknowledgedUpdates: number
  /** Acknowledged creates or versions the database does not hold. */
  lost: number
  /** Ids a create answered more than once. */
  idsTwice: number
  /** Answers other than 2xx, 409 and 503. */
  otherStatuses: number
  /** From the fault to the first 2xx of a request sent after the first 503 (0 when none failed). */
  secondsToFirst2xx: number
}

/** The figures of one scenario; `query` runs SQL on the service's database. */
export async function ackFigures (acks: readonly Ack[], faultAt: number, query: <T>(sql: string, params?: unknown[]) => Promise<T[]>): Promise<AckFigures> {
  const byStatus: Record<string, number> = {}
  for (const a of acks) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1
  const created = acks.filter((a) => a.kind === 'create' && a.id !== undefined).map((a) => a.id!)
  const updated = acks.filter((a) => a.kind === 'update' && a.version !== undefined)
  const [stored] = await query<{ n: number }>('select count(*)::int as n from sala092 where _id = any($1)', [created])
  const versions = await query<{ registro: string, version: number }>(
    "select registro, version from sys_historial where modulo = 'sala092' and registro = any($1)", [[...new Set(updated.map((a) => a.id!))]])
  const have = new Set(versions.map((v) => `${v.registro}@${v.version}`))
  const firstFailure = acks.filter((a) => a.status === 503 && a.at >= faultAt).reduce((m, a) => Math.min(m, a.at), Infinity)
  const recovered = acks.filter((a) => ok(a.status) && a.sent > firstFailure).reduce((m, a) => Math.min(m, a.at), Infinity)
  return {
    answers: acks.length,
    byStatus,
    acknowledgedCreates: created.length,
    acknowledgedUpdates: updated.length,
    lost: (created.length - stored!.n) + updated.filter((a) => !have.has(`${a.id!}@${a.version!}`)).length,
    idsTwice: created.length - new Set(created).size,
    otherStatuses: acks.filter((a) => !ok(a.status) && a.status !== 409 && a.status !== 503).length,
    secondsToFirst2xx: firstFailure === Infinity ? 0 : Math.round((recovered - faultAt) / 100) / 10,
  }
}
