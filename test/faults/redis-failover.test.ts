/**
 * Redis Sentinel failover under load (docs/operations.md "High
 * availability"): three instances behind nginx on REDIS_SENTINELS (a
 * primary, a replica, three Sentinels), their own PostgreSQL, and a client
 * creating 092 calls and updating them with If-Match that records every
 * acknowledgement. The primary is killed with -9; the Sentinels promote the
 * replica. Then a planned switchover (`SENTINEL FAILOVER`): the old primary
 * stays up as a replica and refuses writes (READONLY). Counted: acknowledged writes lost, ids answered twice, statuses
 * other than 2xx/409/503, seconds from the fault to the first 2xx,
 * instances restarted. Prints `[faults] …` for the figures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { everyReady, login, startStack, type Stack } from './helpers/stack.js'
import { ackFigures, startAckLoad } from './helpers/ack-load.js'
import { waitFor } from './helpers/processes.js'

describe('three instances on Redis Sentinel', () => {
  let stack: Stack
  let token: string

  beforeAll(async () => {
    stack = await startStack({ sentinel: true })
    token = await login(stack.url)
  })
  afterAll(async () => { await stack?.close() })

  it('kill -9 of the Redis primary under creates and If-Match updates: nothing acknowledged lost, no id twice, 2xx/409/503 only, back within 30 s, no restart', async () => {
    const group = stack.sentinels!
    const pids = stack.instances.map((i) => i.pid())
    const load = startAckLoad({ url: stack.url, token, concurrency: 20 })
    await waitFor('500 answers before the fault', async () => load.acks.length >= 500, 60_000, 20)
    const primary = await group.primary()
    const faultAt = Date.now()
    await primary.kill()
    const promoted = await group.promotedFrom(primary.port)
    await waitFor('300 acknowledged writes after the promotion', async () =>
      load.acks.filter((a) => a.sent > faultAt && a.status >= 200 && a.status < 300 && a.kind !== 'read').length >= 300, 60_000, 50)
    load.stop()
    const figures = await ackFigures(await load.done, faultAt, stack.query)
    const restarted = stack.instances.filter((i, n) => !i.running() || i.pid() !== pids[n]).length
    console.log(`[faults] Redis primary kill -9 (Sentinel): ${JSON.stringify({ ...figures, instancesRestarted: restarted, promoted: promoted !== primary.port })}`)
    expect(figures.byStatus['503'] ?? 0, 'the fault was not seen').toBeGreaterThan(0)
    expect(figures).toMatchObject({ lost: 0, idsTwice: 0, otherStatuses: 0 })
    expect(figures.secondsToFirst2xx).toBeLessThanOrEqual(30)
    expect(restarted).toBe(0)
    await everyReady(stack, faultAt)
    await expectWhole()
  })

  it('SENTINEL FAILOVER (a switchover: the old primary stays up, demoted) under the same load: the same counts', async () => {
    const group = stack.sentinels!
    const pids = stack.instances.map((i) => i.pid())
    // The killed server back, as a replica of the current primary: the switchover's target.
    await group.rejoin(stack.redis)
    const before = await group.primaryPort()
    const load = startAckLoad({ url: stack.url, token, concurrency: 20 })
    await waitFor('500 answers before the switchover', async () => load.acks.length >= 500, 60_000, 20)
    const faultAt = Date.now()
    await group.switchover()
    expect(await group.promotedFrom(before)).toBe(stack.redis.port)
    await group.demoted(before)
    const demotedAt = Date.now()
    await waitFor('300 acknowledged writes after the old primary was demoted', async () =>
      load.acks.filter((a) => a.sent > demotedAt && a.status >= 200 && a.status < 300 && a.kind !== 'read').length >= 300, 60_000, 50)
    load.stop()
    const figures = await ackFigures(await load.done, faultAt, stack.query)
    const restarted = stack.instances.filter((i, n) => !i.running() || i.pid() !== pids[n]).length
    console.log(`[faults] Redis switchover (SENTINEL FAILOVER): ${JSON.stringify({ ...figures, instancesRestarted: restarted, demotedAfterMs: demotedAt - faultAt })}`)
    expect(figures).toMatchObject({ lost: 0, idsTwice: 0, otherStatuses: 0 })
    expect(figures.secondsToFirst2xx).toBeLessThanOrEqual(30)
    expect(restarted).toBe(0)
    await everyReady(stack, demotedAt)
    await expectWhole()
  })

  /** Every record's version has its history entry, every entry its record. */
  async function expectWhole (): Promise<void> {
    const [whole] = await stack.query<{ records: number, versions: number }>(
      `select (select count(*)::int from sala092 r where not exists (select 1 from sys_historial h where h.modulo = 'sala092' and h.registro = r._id and h.version = r._version)) as records,
              (select count(*)::int from sys_historial h where h.modulo = 'sala092' and not exists (select 1 from sala092 r where r._id = h.registro)) as versions`)
    expect(whole).toEqual({ records: 0, versions: 0 })
  }
})
