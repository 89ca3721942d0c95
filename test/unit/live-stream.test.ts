/**
 * records/events/live-stream.ts with a feed held in memory: the order of
 * catch-up and live batches (a batch that starts beyond the cursor waits
 * for the gap to be read; entries at or below the cursor are dropped), a
 * reload beyond the retention, and a client too slow for what waits.
 * Streams over HTTP and the database: test/integration/event-stream.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { loadRegistry } from '../../core/registry/load.js'
import type { FeedEntry } from '../../records/events/feed.js'
import type { FeedListener } from '../../records/events/feed-hub.js'
import { LiveStream, type LiveStreamDeps } from '../../records/events/live-stream.js'

const sala092 = loadRegistry('modules.yaml').byName.get('sala092')!
const DAY = 86_400_000

const entry = (posicion: number, modulo = 'sala092'): FeedEntry => ({
  posicion, modulo, registro: `092-2026-${String(posicion).padStart(5, '0')}`, version: 1, accion: 'crear', usuario: 'USR-2026-00001',
  fecha: new Date(), campos: [], hash: 'h', datos: { tipo_incidencia: posicion % 2 === 0 ? 'urgente' : 'normal' }, bloqueado: false,
})

/** A feed of `size` entries (every third of another module), a listener to push live batches, and what the client got. */
function harness (size: number, over: Partial<LiveStreamDeps> = {}) {
  const feed = Array.from({ length: size }, (_, i) => entry(i + 1, (i + 1) % 3 === 0 ? 'denuncias' : 'sala092'))
  let listener: FeedListener | undefined
  const written: string[] = []
  const reads: Array<[number, number]> = []
  let closed = false
  const deps: LiveStreamDeps = {
    read: async (after, limit, modulos) => {
      const out = feed.filter((e) => e.posicion > after && modulos.includes(e.modulo)).slice(0, limit)
      reads.push([after, out.length])
      return out
    },
    head: async () => feed.length,
    writtenAt: async (p) => feed[p - 1]?.fecha,
    listen: async (fn) => { listener = fn; return () => { listener = undefined } },
    view: async (_mod, entries) => entries.map((e) => ({ posicion: e.posicion, tipo: 'sala092.creado', modulo: e.modulo, registro_id: e.registro, version: 1, fecha: '', usuario: '', campos_cambiados: [], hash: '', registro: {} })),
    recheck: async () => undefined,
    renew: async () => true,
    write: async (text) => { written.push(text) },
    close: () => { closed = true },
    onProblem: () => undefined,
    ...over,
  }
  const grow = (n: number): FeedEntry[] => {
    const added = Array.from({ length: n }, (_, i) => entry(feed.length + i + 1))
    feed.push(...added)
    return added
  }
  const ids = (): number[] => written.filter((t) => t.startsWith('id: ')).map((t) => Number(/^id: (\d+)/.exec(t)![1]))
  const settle = async (): Promise<void> => { for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)) }
  return { deps, feed, grow, push: (b: FeedEntry[]) => listener?.(b), written, reads, ids, settle, isClosed: () => closed, listening: () => listener !== undefined }
}

const options = { modulos: [sala092], retentionMs: 7 * DAY, heartbeatMs: 60_000, recheckMs: 60_000, renewMs: 60_000, expiresAt: Date.now() + DAY }

describe('LiveStream', () => {
  it('resumes after Last-Event-ID, reads a gap before a batch that starts beyond it, and sends each position once, in order', async () => {
    const h = harness(10)
    const s = new LiveStream(h.deps, { ...options, lastEventId: 4 })
    await s.start()
    await h.settle()
    // 5..10 of sala092 (6 and 9 are denuncias').
    expect(h.ids()).toEqual([5, 7, 8, 10])
    // The hub hands 9..12 (it lagged: 9 and 10 were sent already), then 15..16 after a gap of 13..14.
    const live = h.grow(2)
    h.push([h.feed[8]!, h.feed[9]!, ...live])
    const gap = h.grow(2)
    const after = h.grow(2)
    expect(gap.map((e) => e.posicion)).toEqual([13, 14])
    h.push(after)
    await h.settle()
    expect(h.ids()).toEqual([5, 7, 8, 10, 11, 12, 13, 14, 15, 16])
    s.stop()
    expect(h.listening()).toBe(false)
  })

  it('a position whose next entry is beyond the retention, or beyond the head, gets a reload with the head as its id', async () => {
    const h = harness(5)
    h.feed[2] = { ...h.feed[2]!, fecha: new Date(Date.now() - 8 * DAY) }
    const old = new LiveStream(h.deps, { ...options, lastEventId: 2 })
    await old.start()
    await h.settle()
    expect(h.written.filter((t) => t.includes('event: recargar'))).toEqual(['id: 5\nevent: recargar\ndata: {"motivo":"retencion","posicion":5}\n\n'])
    expect(h.ids()).toEqual([5])
    old.stop()
    const young = harness(5)
    const ok = new LiveStream(young.deps, { ...options, lastEventId: 2 })
    await ok.start()
    await young.settle()
    expect(young.ids()).toEqual([4, 5])
    ok.stop()
    const ahead = harness(5)
    const far = new LiveStream(ahead.deps, { ...options, lastEventId: 99 })
    await far.start()
    expect(ahead.written.some((t) => t.startsWith('id: 5\nevent: recargar'))).toBe(true)
    far.stop()
  })

  it('a client that does not take what is written ends with `lento` once too many batches wait', async () => {
    let release: () => void = () => undefined
    const h = harness(0, { write: async (text) => { if (text.startsWith('id: ')) await new Promise<void>((r) => { release = r }) } })
    const s = new LiveStream(h.deps, options)
    await s.start()
    for (let i = 0; i < 205; i++) h.push(h.grow(1))
    await h.settle()
    expect(h.isClosed()).toBe(true)
    expect(h.listening()).toBe(false)
    release()
  })

  it('tipos and a filter choose the entries, the others only move the cursor', async () => {
    const h = harness(0)
    const s = new LiveStream(h.deps, { ...options, filter: (row) => row.tipo_incidencia === 'urgente' })
    await s.start()
    h.push(h.grow(6))
    await h.settle()
    expect(h.ids()).toEqual([2, 4, 6])
    expect(h.reads.length).toBe(1)
    s.stop()
  })
})
