/**
 * A retry never writes twice (docs/user-guide.md "Retries and
 * Idempotency-Key") on a real deployment (test/faults/helpers/stack.ts):
 * three instances behind nginx, their own PostgreSQL and Redis. A client
 * sends creates and imports with a key, gives up on its first attempt
 * after a few milliseconds (before the answer, or after the write), and
 * retries with the same key through nginx — landing on any instance —
 * until it has an answer. The database holds each record once, and every
 * answer a key got equals its first completed answer.
 *
 * Prints what it saw (`[faults] …`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { login, startStack, type Stack } from './helpers/stack.js'

interface Answer {
  readonly status: number
  readonly body: string
  readonly replayed: boolean
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('retries with an Idempotency-Key through nginx', () => {
  let stack: Stack
  let token: string
  const run = `r${process.pid}`

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_IP_MAX: '1000000', RATE_LIMIT_TOKEN_MAX: '1000000' } })
    token = await login(stack.url)
  })
  afterAll(async () => { await stack?.close() })

  /** One attempt; undefined when the client gave up (`timeoutMs`) or no answer came. */
  async function attempt (path: string, key: string, body: string, type: string, timeoutMs: number): Promise<Answer | undefined> {
    try {
      const res = await fetch(`${stack.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': type, 'idempotency-key': key },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      })
      return { status: res.status, body: await res.text(), replayed: res.headers.get('idempotent-replayed') === 'true' }
    } catch {
      return undefined
    }
  }

  /**
   * The client: a first attempt given up after `firstMs` (its answer, if
   * any, thrown away as a timed-out client never reads it), then retries
   * with the same key until a 2xx, waiting on 409 and on gateway errors;
   * then two more repeats. Every 2xx answer it read, in order.
   */
  async function client (path: string, key: string, body: string, type: string, firstMs: number): Promise<{ answers: Answer[], statuses: number[] }> {
    const statuses: number[] = []
    const first = await attempt(path, key, body, type, firstMs)
    statuses.push(first?.status ?? 0)
    const answers: Answer[] = []
    for (let tries = 0; answers.length === 0 && tries < 300; tries++) {
      const a = await attempt(path, key, body, type, 60_000)
      statuses.push(a?.status ?? 0)
      if (a !== undefined && a.status >= 200 && a.status < 300) answers.push(a)
      else await sleep(a?.status === 409 ? 200 : 100)
    }
    for (let i = 0; i < 2; i++) {
      const a = await attempt(path, key, body, type, 60_000)
      statuses.push(a?.status ?? 0)
      if (a !== undefined) answers.push(a)
    }
    return { answers, statuses }
  }

  const denuncia = (marker: string): string => JSON.stringify({ denunciante_nombre: 'Juan Pérez', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: marker })

  it('creates given up and retried are each stored once, and every answer is the first', async () => {
    const n = 60
    // First attempts given up after 1 to 40 ms: some before nginx sent them, some while they ran, some after the commit.
    const results = await Promise.all(Array.from({ length: n }, async (_, i) => {
      await sleep(i * 15)
      const marker = `idem-${run}-${i}`
      return { marker, ...await client('/denuncias', `${run}-crear-${i}`, denuncia(marker), 'application/json', 1 + (i % 40)) }
    }))
    const rows = await stack.query<{ descripcion: string, n: number }>(`select descripcion, count(*)::int as n from denuncias where descripcion like $1 group by descripcion`, [`idem-${run}-%`])
    const counts = new Map(rows.map((r) => [r.descripcion, r.n]))
    for (const r of results) {
      expect(counts.get(r.marker), `${r.marker}: records stored (statuses ${r.statuses.join(',')})`).toBe(1)
      expect(r.answers.length, `${r.marker}: answers`).toBe(3)
      for (const a of r.answers) {
        expect(a.status, r.marker).toBe(201)
        expect(a.body, r.marker).toBe(r.answers[0]!.body)
      }
      // The repeats after the first completed answer are replays.
      expect(r.answers.slice(1).every((a) => a.replayed), r.marker).toBe(true)
    }
    const replayedFirst = results.filter((r) => r.answers[0]!.replayed).length
    const statuses: Record<string, number> = {}
    for (const s of results.flatMap((r) => r.statuses)) statuses[s] = (statuses[s] ?? 0) + 1
    console.log(`[faults] idempotent creates: ${n} keys, 1 record each; first completed answer a replay (the given-up attempt had written) for ${replayedFirst}; statuses ${JSON.stringify(statuses)}`)
  })

  it('a create whose answer the client lost is answered again, not written again, by another instance', async () => {
    const marker = `idem-${run}-perdida`
    const key = `${run}-perdida`
    const first = await attempt('/denuncias', key, denuncia(marker), 'application/json', 60_000)
    expect(first?.status).toBe(201)
    // nginx sends consecutive requests to the instances in turn: three repeats reach all three.
    for (let i = 0; i < 3; i++) {
      const again = await attempt('/denuncias', key, denuncia(marker), 'application/json', 60_000)
      expect(again).toEqual({ ...first, replayed: true })
    }
    const rows = await stack.query<{ n: number }>('select count(*)::int as n from denuncias where descripcion = $1', [marker])
    expect(rows[0]!.n).toBe(1)
  })

  it('imports given up and retried write their rows once, with the same ids in every answer', async () => {
    const imports = 4
    const rows = 500
    const results = await Promise.all(Array.from({ length: imports }, async (_, j) => {
      const marker = `lote-${run}-${j}`
      const body = Array.from({ length: rows }, (_, i) => denuncia(`${marker}-${i}`)).join('\n') + '\n'
      return { marker, ...await client('/denuncias/importar', `${run}-importar-${j}`, body, 'application/x-ndjson', 20 + j * 60) }
    }))
    for (const r of results) {
      const stored = await stack.query<{ n: number, distintos: number }>('select count(*)::int as n, count(distinct descripcion)::int as distintos from denuncias where descripcion like $1', [`${r.marker}-%`])
      expect(stored[0], `${r.marker} (statuses ${r.statuses.join(',')})`).toEqual({ n: rows, distintos: rows })
      for (const a of r.answers) {
        expect(a.status, r.marker).toBe(201)
        expect(a.body, r.marker).toBe(r.answers[0]!.body)
      }
      expect(JSON.parse(r.answers[0]!.body).data.ids).toHaveLength(rows)
    }
    const statuses: Record<string, number> = {}
    for (const s of results.flatMap((r) => r.statuses)) statuses[s] = (statuses[s] ?? 0) + 1
    console.log(`[faults] idempotent imports: ${imports} × ${rows} rows, each stored once; statuses ${JSON.stringify(statuses)}`)
  })
})
