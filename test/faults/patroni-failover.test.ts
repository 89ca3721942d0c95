/**
 * PostgreSQL failovers under Patroni (docs/operations.md "High
 * availability"): three instances behind nginx whose DATABASE_URL is
 * HAProxy in front of two Patroni members in synchronous mode, Redis
 * through Sentinels, and a client creating 092 calls and updating them with
 * If-Match that records every acknowledgement. Faults, one after another
 * on the same deployment (the failed member rejoins between them): kill -9
 * of the primary and its Patroni, `patronictl switchover`, the whole
 * primary stalled by SIGSTOP for 30 s, and the PostgreSQL and Redis
 * primaries killed together. Each counts acknowledged writes lost, ids
 * answered twice, statuses other than 2xx/409/503, seconds from the fault
 * to the first 2xx and instances restarted; prints `[faults] …`.
 */
import { spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { everyReady, login, startStack, type Stack } from './helpers/stack.js'
import { ackFigures, startAckLoad, type AckFigures } from './helpers/ack-load.js'
import { waitFor } from './helpers/processes.js'
import type { Member } from './helpers/patroni.js'

/** The pids of a member's PostgreSQL: the postmaster and its children. */
function postgresProcesses (m: Member): number[] {
  const postmaster = m.postgresPid()
  if (postmaster === undefined) return []
  const children = spawnSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).stdout.trim().split('\n').filter((s) => s !== '').map(Number)
  return [postmaster, ...children]
}

describe('three instances on Patroni (HAProxy) and Redis Sentinel', () => {
  let stack: Stack
  let token: string

  beforeAll(async () => {
    stack = await startStack({ patroni: true, sentinel: true })
    token = await login(stack.url)
  }, 300_000)
  afterAll(async () => { await stack?.close() })

  /**
   * Runs the load, applies `fault` once 500 answers came, waits for 300
   * acknowledged writes after `recovered` resolves, stops the load, waits
   * for `settled` (the failed member back as the synchronous standby: a
   * rewind that dropped acknowledged writes would show then), and checks
   * the figures.
   */
  async function underLoad (name: string, fault: () => Promise<void>, recovered: () => Promise<void>, settled: () => Promise<void>): Promise<AckFigures> {
    const pids = stack.instances.map((i) => i.pid())
    const load = startAckLoad({ url: stack.url, token, concurrency: 20 })
    try {
      await waitFor('500 answers before the fault', async () => load.acks.length >= 500, 60_000, 20)
      const faultAt = Date.now()
      await fault()
      await recovered()
      const backAt = Date.now()
      await waitFor('300 acknowledged writes after the recovery', async () =>
        load.acks.filter((a) => a.sent > backAt && a.status >= 200 && a.status < 300 && a.kind !== 'read').length >= 300, 90_000, 50)
      load.stop()
      const acks = await load.done
      await settled()
      const figures = await ackFigures(acks, faultAt, stack.query)
      const restarted = stack.instances.filter((i, n) => !i.running() || i.pid() !== pids[n]).length
      console.log(`[faults] ${name}: ${JSON.stringify({ ...figures, instancesRestarted: restarted })}`)
      expect(figures).toMatchObject({ lost: 0, idsTwice: 0, otherStatuses: 0 })
      expect(figures.secondsToFirst2xx).toBeLessThanOrEqual(30)
      expect(restarted).toBe(0)
      await everyReady(stack, backAt)
      await expectWhole()
      return figures
    } finally {
      load.stop()
      await load.done
    }
  }

  /** Every record's version has its history entry, every entry its record. */
  async function expectWhole (): Promise<void> {
    const [whole] = await stack.query<{ records: number, versions: number }>(
      `select (select count(*)::int from sala092 r where not exists (select 1 from sys_historial h where h.modulo = 'sala092' and h.registro = r._id and h.version = r._version)) as records,
              (select count(*)::int from sys_historial h where h.modulo = 'sala092' and not exists (select 1 from sala092 r where r._id = h.registro)) as versions`)
    expect(whole).toEqual({ records: 0, versions: 0 })
  }

  /** The member that failed back as the synchronous standby. */
  async function rejoin (m: Member): Promise<void> {
    if (m.patroniPid() === undefined) await m.start()
    await stack.patroni!.healthy()
  }

  it('kill -9 of the PostgreSQL primary and its Patroni', async () => {
    const cluster = stack.patroni!
    const primary = await cluster.leader()
    const figures = await underLoad('PostgreSQL primary and Patroni kill -9', async () => {
      for (const pid of [primary.patroniPid()!, primary.postgresPid()!]) process.kill(pid, 'SIGKILL')
    }, async () => { await cluster.promotedFrom(primary.name) }, async () => { await rejoin(primary) })
    expect(figures.byStatus['503'] ?? 0, 'the fault was not seen').toBeGreaterThan(0)
  })

  it('patronictl switchover', async () => {
    const cluster = stack.patroni!
    const primary = await cluster.leader()
    await underLoad('patronictl switchover', async () => { await cluster.switchover() }, async () => { await cluster.promotedFrom(primary.name) }, async () => { await rejoin(primary) })
  })

  it('the primary stalled (SIGSTOP of its Patroni and PostgreSQL) for 30 s', async () => {
    const cluster = stack.patroni!
    const primary = await cluster.leader()
    const frozen = [primary.patroniPid()!, ...postgresProcesses(primary)]
    let resumed = false
    const resume = (): void => { if (!resumed) { resumed = true; for (const pid of frozen) try { process.kill(pid, 'SIGCONT') } catch { /* gone */ } } }
    try {
      await underLoad('PostgreSQL primary stalled 30 s (SIGSTOP)', async () => {
        for (const pid of frozen) process.kill(pid, 'SIGSTOP')
        setTimeout(resume, 30_000)
      }, async () => { await cluster.promotedFrom(primary.name) }, async () => {
        await waitFor('the stalled primary resumed', async () => resumed, 60_000, 200)
        await rejoin(primary)
        // It came back as the standby: the member promoted meanwhile still leads.
        expect((await cluster.leader()).name).not.toBe(primary.name)
      })
    } finally {
      resume()
    }
  })

  it('the PostgreSQL and Redis primaries killed together', async () => {
    const cluster = stack.patroni!
    const group = stack.sentinels!
    const primary = await cluster.leader()
    const redis = await group.primary()
    const figures = await underLoad('PostgreSQL and Redis primaries kill -9 together', async () => {
      for (const pid of [primary.patroniPid()!, primary.postgresPid()!]) process.kill(pid, 'SIGKILL')
      await redis.kill()
    }, async () => {
      await Promise.all([cluster.promotedFrom(primary.name), group.promotedFrom(redis.port)])
    }, async () => { await rejoin(primary) })
    expect(figures.byStatus['503'] ?? 0, 'the fault was not seen').toBeGreaterThan(0)
  })
})
