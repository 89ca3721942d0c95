/**
 * SPEC S18 "Webhooks", under a crash (docs/operator-guide.md "Faults"): two
 * instances behind nginx with their own PostgreSQL and Redis
 * (test/faults/helpers/stack.ts), a subscription to sala092 delivered to a
 * real receiver on loopback. In the middle of a burst of creates the
 * instance holding the subscription's lease is killed with SIGKILL. The
 * other must take the subscription over within 30 s (the lease,
 * WEBHOOK_LEASE, is 20 s), and in the end every event of the feed is
 * delivered at least once, first deliveries in feed order, each signed.
 */
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js'
import { startLoad, type Call } from './helpers/load.js'
import { waitFor } from './helpers/processes.js'
import { call, login, startStack, type Stack } from './helpers/stack.js'

const PATH = '/recibidos'
const acknowledgedOf = (answers: ReadonlyArray<{ status: number }>): number => answers.filter((a) => a.status === 201).length
const BURST = 400

describe('a webhook deliverer killed in the middle of a burst', () => {
  let stack: Stack
  let receiver: Receiver
  let token: string

  beforeAll(async () => {
    receiver = await startReceiver()
    // The receiver is on loopback: allowed for this test only.
    stack = await startStack({ instances: 2, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } })
    token = await login(stack.url)
  })
  afterAll(async () => {
    await stack?.close()
    await receiver?.close()
  })

  it('another instance takes over within 30 s; every event delivered at least once, in order, signed', async () => {
    const created = await call(stack.url, 'POST', '/suscripciones', { token, body: { url: receiver.url(PATH), modulos: ['sala092'], rol: 'superadmin' } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const { _id: id, secreto } = created.body.data as { _id: string, secreto: string }

    const load = startLoad({ url: stack.url, token, concurrency: 4, total: BURST, next: (i): Call => ({ kind: 'sala092', method: 'POST', path: '/sala092', body: { tipo_incidencia: 'urgente', descripcion: `ráfaga ${i}` } }) })
    // Some events out, then find who delivers them.
    await receiver.waitFor(PATH, 60, 60_000)
    const [state] = await stack.query<{ arrendatario: string | null }>('select arrendatario from sys_suscripciones_estado where suscripcion = $1', [id])
    const pid = Number(state?.arrendatario?.split(':')[1])
    const holder = stack.instances.find((i) => i.pid() === pid)
    expect(holder, `lease holder ${state?.arrendatario} is none of the instances`).toBeDefined()
    const survivor = stack.instances.find((i) => i !== holder)!
    await holder!.kill9()
    const killedAt = Date.now()
    const before = receiver.at(PATH).length
    // The survivor delivers again: the first request after the kill.
    await waitFor('a delivery by the surviving instance', async () => receiver.at(PATH).length > before, 40_000, 100)
    const takeover = Date.now() - killedAt
    const answers = await load.done
    expect(survivor.running()).toBe(true)

    // Every sala092 event of the feed (what committed, acknowledged or not) reaches the receiver.
    const feedNow = async (): Promise<number[]> => (await stack.query<{ seq: string }>("select seq::text as seq from sys_cadena where modulo = 'sala092' order by seq")).map((r) => Number(r.seq))
    const positions = (): number[] => receiver.at(PATH).map((r) => r.json?.posicion as number)
    let feed: number[] = []
    await waitFor('every event of the feed delivered', async () => {
      feed = await feedNow()
      const seen = new Set(positions())
      return feed.length >= acknowledgedOf(answers) && feed.every((p) => seen.has(p))
    }, 90_000, 250)
    const got = positions()
    const firsts = got.filter((p, i) => got.indexOf(p) === i)
    expect(firsts, 'first deliveries out of feed order').toEqual([...firsts].sort((a, b) => a - b))
    expect(new Set(got)).toEqual(new Set(feed))
    const hook = new Webhook(secreto)
    for (const r of receiver.at(PATH)) expect(() => hook.verify(r.body, r.headers as Record<string, string>)).not.toThrow()
    const acknowledged = acknowledgedOf(answers)
    console.log(`[faults] webhook takeover: ${feed.length} events in the feed (${acknowledged} creates acknowledged of ${BURST}), ${got.length} deliveries (${got.length - new Set(got).size} repeated), first delivery by the survivor ${takeover} ms after the kill`)
    expect(takeover).toBeLessThan(30_000)
    expect(feed.length).toBeGreaterThanOrEqual(acknowledged)
  })
})
