/**
 * The feed hub (records/events/feed-hub.ts) over an in-memory feed: every
 * entry reaches every listener once, in order, in contiguous batches,
 * whether woken by a write on this or another hub, or by nothing (the poll).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CoalescedTask } from '../../core/coalesced-task.js'
import { FeedHub, QUIET_SIGNAL_MS, WAKER_SEAL_MS, WRITE_SEAL_MS } from '../../records/events/feed-hub.js'
import type { FeedEntry } from '../../records/events/feed.js'
import { MemorySignalStore } from '../../stores/signals/memory.js'

/** A feed whose entries are "written" now and "sealed" when a hub seals. */
function fakeFeed () {
  const sealed: FeedEntry[] = []
  let pending = 0
  const entry = (posicion: number): FeedEntry => ({ posicion, modulo: 'sala092', registro: `092-2026-${posicion}`, version: 1, accion: 'crear', usuario: 'u', fecha: new Date(), campos: [], hash: 'h', datos: {}, bloqueado: false })
  return {
    write (n = 1) { pending += n },
    pending: () => pending,
    deps: (signals: MemorySignalStore, problems: unknown[] = []) => ({
      signals,
      read: async (after: number, limit: number) => sealed.filter((e) => e.posicion > after).slice(0, limit),
      head: async () => sealed.length,
      seal: async () => { const n = pending; pending = 0; for (let i = 0; i < n; i++) sealed.push(entry(sealed.length + 1)); return { sealed: n, behind: false } },
      onProblem: (_m: string, err: unknown) => { problems.push(err) },
    }),
  }
}

/** The in-process signal store, noting each channel published on. */
class NotedSignals extends MemorySignalStore {
  readonly published: string[] = []
  override publish (channel: string, message: string): Promise<number | undefined> {
    this.published.push(channel)
    return super.publish(channel, message)
  }
}

const until = async (ok: () => boolean, ms = 3000): Promise<void> => {
  const t0 = Date.now()
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const hubs: FeedHub[] = []
afterEach(async () => { await Promise.all(hubs.splice(0).map(async (h) => h.close())) })

describe('FeedHub', () => {
  it('hands a write on another instance to this one\'s listeners, in order and in contiguous batches', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    const [writer, reader] = [new FeedHub(feed.deps(signals)), new FeedHub(feed.deps(signals))]
    hubs.push(writer, reader)
    await writer.start()
    await reader.start()
    const batches: number[][] = []
    await reader.listen((entries) => { batches.push(entries.map((e) => e.posicion)) })
    for (let i = 0; i < 5; i++) { feed.write(120); writer.written(); await new Promise((resolve) => setTimeout(resolve, 7)) }
    await until(() => batches.flat().length === 600)
    expect(batches.flat()).toEqual(Array.from({ length: 600 }, (_, i) => i + 1))
    // Each batch starts right after the previous one (a listener can tell a gap from a batch).
    for (let i = 1; i < batches.length; i++) expect(batches[i]![0]).toBe(batches[i - 1]!.at(-1)! + 1)
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(500)
  })

  it('stops signalling writes that no instance listens for, and signals at once again when one starts listening', async () => {
    const signals = new NotedSignals()
    const feed = fakeFeed()
    const [writer, reader] = [new FeedHub(feed.deps(signals)), new FeedHub(feed.deps(signals))]
    hubs.push(writer, reader)
    await writer.start()
    await reader.start()
    const escritos = (): number => signals.published.filter((c) => c === 'feed:escrito').length
    // Ten writes over 400 ms: the first signal reaches nobody, the rest are not sent.
    for (let i = 0; i < 10; i++) { feed.write(1); writer.written(); await new Promise((resolve) => setTimeout(resolve, 40)) }
    expect(escritos()).toBe(1)
    const seen: number[] = []
    await reader.listen((entries) => { seen.push(...entries.map((e) => e.posicion)) })
    await until(() => signals.published.includes('feed:escuchando'))
    await new Promise((resolve) => setTimeout(resolve, 10))
    // The reader announced itself: the next write is signalled and sealed well before the 2 s poll.
    const t0 = Date.now()
    feed.write(1); writer.written()
    await until(() => seen.length === 11)
    expect(Date.now() - t0).toBeLessThan(500)
    expect(escritos()).toBe(2)
    expect(seen).toEqual(Array.from({ length: 11 }, (_, i) => i + 1))
  })

  it('while nobody listens, a writer still signals once per QUIET_SIGNAL_MS, in case an announcement was lost', async () => {
    const signals = new NotedSignals()
    const feed = fakeFeed()
    const writer = new FeedHub(feed.deps(signals))
    hubs.push(writer)
    await writer.start()
    const t0 = Date.now()
    while (Date.now() - t0 < QUIET_SIGNAL_MS + 300) { feed.write(1); writer.written(); await new Promise((resolve) => setTimeout(resolve, 30)) }
    expect(signals.published.filter((c) => c === 'feed:escrito').length).toBe(2)
  })

  it('does not seal at once for an instance with no listener, and a lost signal is made up by the poll', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    // A write's own seal comes later than the poll here: the poll is what is tested.
    const hub = new FeedHub({ ...feed.deps(signals), writeSealMs: 60_000 })
    hubs.push(hub)
    await hub.start()
    feed.write(3)
    hub.written()
    await new Promise((resolve) => setTimeout(resolve, 80))
    expect(await hub.position()).toBe(0)
    const seen: number[] = []
    await hub.listen((entries) => { seen.push(...entries.map((e) => e.posicion)) })
    // No signal at all: the 2 s poll seals and reads.
    await until(() => seen.length === 3, 4000)
    expect(seen).toEqual([1, 2, 3])
  })

  it('seals its own writes within writeSealMs though nobody listens: one seal for a burst, none without writes', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    let seals = 0
    const deps = feed.deps(signals)
    const hub = new FeedHub({ ...deps, writeSealMs: 150, seal: async () => { seals++; return deps.seal() } })
    hubs.push(hub)
    await hub.start()
    const t0 = Date.now()
    // A burst: five writes in one turn.
    for (let i = 0; i < 5; i++) { feed.write(1); hub.written() }
    await new Promise((resolve) => setImmediate(resolve))
    expect(feed.pending()).toBe(5)
    await until(() => feed.pending() === 0, 3000)
    // Timers may fire a millisecond early by the wall clock.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)
    expect(seals).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(seals).toBe(1)
    // The default: a second at most.
    const late = new FeedHub(feed.deps(signals))
    hubs.push(late)
    await late.start()
    feed.write(2); late.written()
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(feed.pending()).toBe(2)
    await until(() => feed.pending() === 0, WRITE_SEAL_MS + 1000)
  })

  it('seals again, less and less often, while a transaction still running holds writes back, and stops once none is', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    const runs: number[] = []
    const deps = feed.deps(signals)
    const t0 = Date.now()
    // The first two runs find rows they cannot take yet.
    const hub = new FeedHub({ ...deps, writeSealMs: 50, seal: async () => { runs.push(Date.now() - t0); const r = await deps.seal(); return { ...r, behind: runs.length <= 2 } } })
    hubs.push(hub)
    await hub.start()
    feed.write(1); hub.written()
    await until(() => runs.length === 3, 3000)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(runs).toHaveLength(3)
    // 50 ms after the write, then 50 and 100 ms after each run that was held back.
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(45)
    expect(runs[2]! - runs[1]!).toBeGreaterThanOrEqual(95)
  })

  it('seals again, less and less often, after a run that failed, and stops once one succeeds', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    const runs: number[] = []
    const problems: string[] = []
    const deps = feed.deps(signals)
    const t0 = Date.now()
    // The first two runs fail (the database away); nothing is written after them.
    const hub = new FeedHub({
      ...deps,
      writeSealMs: 50,
      onProblem: (message) => { problems.push(message) },
      seal: async () => { runs.push(Date.now() - t0); if (runs.length <= 2) throw new Error('connection refused'); return deps.seal() },
    })
    hubs.push(hub)
    await hub.start()
    feed.write(1); hub.written()
    await until(() => feed.pending() === 0, 3000)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(runs).toHaveLength(3)
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(45)
    expect(runs[2]! - runs[1]!).toBeGreaterThanOrEqual(95)
    expect(problems).toHaveLength(2)
    expect(problems[0]).toMatch(/could not seal the global chain; retrying within/)
  })

  it('wakes a waker on a write elsewhere without reading the feed for it', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    let reads = 0
    const deps = feed.deps(signals)
    const [writer, reader] = [new FeedHub(deps), new FeedHub({ ...deps, read: async (after, limit) => { reads++; return deps.read(after, limit) } })]
    hubs.push(writer, reader)
    await writer.start()
    await reader.start()
    let woken = 0
    const stop = reader.onAdvance(() => { woken++ })
    feed.write(2); writer.written()
    await until(() => woken >= 1)
    expect(reads).toBe(0)
    expect(await reader.position()).toBe(2)
    stop()
    expect(reader.size).toBe(0)
    feed.write(1); writer.written()
    await new Promise((resolve) => setTimeout(resolve, 80))
    // No one listens any more: nothing is sealed early.
    expect(await reader.position()).toBe(2)
  })

  it('seals for a waker once per window, however many writes signal in it; a listener has them sealed at once', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    let seals = 0
    const deps = feed.deps(signals)
    const [writer, reader] = [new FeedHub(deps), new FeedHub({ ...deps, seal: async () => { seals++; return deps.seal() } })]
    hubs.push(writer, reader)
    await writer.start()
    await reader.start()
    let woken = 0
    reader.onAdvance(() => { woken++ })
    const t0 = Date.now()
    // Ten signals 25 ms apart: each would seal at once for a listener.
    for (let i = 0; i < 10; i++) { feed.write(1); writer.written(); await new Promise((resolve) => setTimeout(resolve, 25)) }
    await until(() => woken >= 1 && feed.pending() === 0)
    expect(seals).toBeGreaterThanOrEqual(1)
    expect(seals).toBeLessThanOrEqual(3)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(WAKER_SEAL_MS)
    seals = 0
    await reader.listen(() => {})
    for (let i = 0; i < 5; i++) { feed.write(1); writer.written(); await new Promise((resolve) => setTimeout(resolve, 60)) }
    await until(() => feed.pending() === 0)
    expect(seals).toBeGreaterThanOrEqual(5)
  })

  it('stops handing entries to a listener removed', async () => {
    const signals = new MemorySignalStore()
    const feed = fakeFeed()
    const hub = new FeedHub(feed.deps(signals))
    hubs.push(hub)
    await hub.start()
    const a: number[] = []
    const b: number[] = []
    const stopA = await hub.listen((entries) => { a.push(...entries.map((e) => e.posicion)) })
    await hub.listen((entries) => { b.push(...entries.map((e) => e.posicion)) })
    feed.write(1); hub.written()
    await until(() => b.length === 1)
    stopA()
    feed.write(1); hub.written()
    await until(() => b.length === 2)
    expect(a).toEqual([1])
    expect(hub.size).toBe(1)
  })
})

describe('CoalescedTask', () => {
  it('runs once more after a burst of asks during a run, never twice at once', async () => {
    let running = 0
    let most = 0
    let runs = 0
    const task = new CoalescedTask(async () => {
      running++; most = Math.max(most, running); runs++
      await new Promise((resolve) => setTimeout(resolve, 20))
      running--
    }, () => {})
    task.ask()
    for (let i = 0; i < 10; i++) task.ask()
    await until(() => runs === 2 && running === 0)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(runs).toBe(2)
    expect(most).toBe(1)
    await task.stop()
  })

  it('reports a failed run and keeps serving', async () => {
    const errors: unknown[] = []
    let n = 0
    const task = new CoalescedTask(async () => { if (n++ === 0) throw new Error('first') }, (err) => { errors.push(err) })
    task.ask()
    await until(() => errors.length === 1)
    task.ask()
    await until(() => n === 2)
    expect((errors[0] as Error).message).toBe('first')
    await task.stop()
  })
})
