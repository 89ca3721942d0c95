/**
 * Issue 8's fault scenarios on a real deployment (test/faults/helpers/
 * stack.ts): three instances behind nginx, their own PostgreSQL and Redis.
 *
 * a. Concurrent creates over several modules: no id twice, every
 *    acknowledged id stored.
 * b. kill -9 of one instance under writes: every acknowledged id stored;
 *    the only failures are gateway errors for requests in flight on the
 *    killed instance.
 * c. PostgreSQL stopped (`-m fast`, then `-m immediate`) and started again
 *    under reads and writes: only 2xx and 503, no acknowledged write lost,
 *    nothing half written, and the instances recover by themselves.
 *
 * Each scenario prints what it saw (`[faults] …`) for the figures of docs/operator-guide.md ("Faults").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, login, call, startStack, type Stack } from './helpers/stack.js'
import { startLoad, tally, type Answer, type Call } from './helpers/load.js'
import { waitFor } from './helpers/processes.js'

/** Creates in three modules, in turn. */
const CREATES: Array<(i: number) => Call> = [
  (i) => ({ kind: 'sala092', method: 'POST', path: '/sala092', body: { tipo_incidencia: 'normal', descripcion: `carga ${i}` } }),
  (i) => ({ kind: 'denuncias', method: 'POST', path: '/denuncias', body: { denunciante_nombre: 'Juan Pérez', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: `carga ${i}` } }),
  (i) => ({ kind: 'equipamiento', method: 'POST', path: '/equipamiento', body: { tipo: 'radio', nombre: `Radio ${i}` } }),
]
const create = (i: number): Call => CREATES[i % CREATES.length]!(i)
/** Mostly creates, one read in five. */
const mixed = (i: number): Call => i % 5 === 4 ? { kind: 'lectura', method: 'GET', path: '/sala092?limit=5' } : create(i)

const ok = (a: Answer): boolean => a.status >= 200 && a.status < 300

function report (scenario: string, answers: readonly Answer[], extra: Record<string, unknown> = {}): void {
  const byStatus: Record<string, number> = {}
  for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1
  console.log(`[faults] ${scenario}: ${answers.length} answers ${JSON.stringify(byStatus)} by kind ${JSON.stringify(tally(answers))} ${JSON.stringify(extra)}`)
}

describe('three instances behind nginx', () => {
  let stack: Stack
  let token: string

  beforeAll(async () => {
    stack = await startStack()
    token = await login(stack.url)
  })
  afterAll(async () => { await stack?.close() })

  /** Every acknowledged create is in its table, and no id was handed out twice. */
  async function expectStored (answers: readonly Answer[]): Promise<number> {
    const created = answers.filter((a) => ok(a) && a.id !== undefined)
    const ids = created.map((a) => a.id!)
    expect(new Set(ids).size, 'an id was acknowledged twice').toBe(ids.length)
    for (const kind of new Set(created.map((a) => a.kind))) {
      const mine = created.filter((a) => a.kind === kind).map((a) => a.id!)
      const rows = await stack.query<{ n: number }>(`select count(*)::int as n from ${kind} where _id = any($1)`, [mine])
      expect(rows[0]!.n, `acknowledged ${kind} missing from the database`).toBe(mine.length)
    }
    return ids.length
  }

  /** No record without the history entry of its version, no history entry without its record. */
  async function expectWhole (): Promise<void> {
    for (const kind of ['sala092', 'denuncias', 'equipamiento']) {
      const [row] = await stack.query<{ records: number, versions: number }>(
        `select (select count(*)::int from ${kind} r where not exists (select 1 from sys_historial h where h.modulo = $1 and h.registro = r._id and h.version = r._version)) as records,
                (select count(*)::int from sys_historial h where h.modulo = $1 and not exists (select 1 from ${kind} r where r._id = h.registro)) as versions`, [kind])
      expect(row, `half-written ${kind}`).toEqual({ records: 0, versions: 0 })
    }
  }

  it('a. 3,000 concurrent creates over 50 connections in three modules: unique ids, all stored', async () => {
    const before = stack.nginx.perUpstream()
    const answers = await startLoad({ url: stack.url, token, concurrency: 50, total: 3000, next: create }).done
    const after = stack.nginx.perUpstream()
    const served = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]))
    report('a. concurrent creates', answers, { perInstance: served })
    expect(answers.filter((a) => a.status !== 201)).toEqual([])
    expect(await expectStored(answers)).toBe(3000)
    await expectWhole()
    expect(Object.values(served).filter((n) => n > 0).length).toBe(3) // nginx spread them over all three
  })

  it('b. kill -9 of one instance under writes: acknowledged writes stored, only gateway errors', async () => {
    const victim = stack.instances[1]!
    const load = startLoad({ url: stack.url, token, concurrency: 30, total: 2000, next: create })
    await waitFor('300 answers before the kill', async () => load.answers.length >= 300, 60_000, 20)
    await victim.kill9()
    const killedAt = load.answers.length
    const answers = await load.done
    report('b. kill -9 under writes', answers, { killedAfter: killedAt })
    // A request in flight on the killed instance gets a gateway error (nginx
    // does not send a POST twice); everything else succeeds elsewhere.
    expect(answers.filter((a) => !ok(a) && ![502, 504].includes(a.status))).toEqual([])
    expect(answers.filter(ok).length).toBeGreaterThan(0)
    await expectStored(answers)
    await expectWhole()
    // It comes back on its own port and nginx uses it again.
    await victim.start()
    const direct = await call(victim.url, 'POST', '/sala092', { token, body: { tipo_incidencia: 'normal', descripcion: 'de vuelta' } })
    expect(direct.status).toBe(201)
  })

  for (const mode of ['fast', 'immediate'] as const) {
    it(`c. PostgreSQL stopped (-m ${mode}) and started under reads and writes: 2xx or 503 only, nothing lost, recovery without restart`, async () => {
      const load = startLoad({ url: stack.url, token, concurrency: 30, next: mixed })
      await waitFor('300 answers before the stop', async () => load.answers.length >= 300, 60_000, 20)
      const stoppedAt = Date.now()
      await stack.pg!.stop(mode)
      await waitFor('300 answers while PostgreSQL is down', async () => load.answers.filter((a) => a.at > stoppedAt).length >= 300, 60_000, 20)
      await stack.pg!.start()
      const backAt = Date.now()
      // Recovery, polled: writes succeed again on their own.
      await waitFor('100 created records after PostgreSQL is back', async () =>
        load.answers.filter((a) => a.at > backAt && a.status === 201).length >= 100, 60_000, 20)
      load.stop()
      const answers = await load.done
      const firstWrite = answers.find((a) => a.at > backAt && a.status === 201)!
      const during = answers.filter((a) => a.at > stoppedAt && a.at <= backAt)
      report(`c. PostgreSQL restart (-m ${mode})`, answers, {
        betweenStopAndStart: tally(during),
        firstWriteMsAfterBack: firstWrite.at - backAt,
      })
      expect(answers.filter((a) => !ok(a) && a.status !== 503)).toEqual([])
      expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0)
      await expectStored(answers)
      await expectWhole()
      for (const i of stack.instances) expect(i.running(), `${i.name} died`).toBe(true)
      for (const i of stack.instances) expect((await call(i.url, 'GET', '/ready')).status).toBe(200)
    })
  }

  it('the superadmin still logs in through nginx after it all', async () => {
    expect(await login(stack.url, ADMIN.username, ADMIN.password)).toMatch(/^ey/)
  })
})
