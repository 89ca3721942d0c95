/**
 * The S18 live stream (GET /eventos, docs/user-guide.md "Events: the live
 * stream") read with fetch, not EventSource: EventSource cannot send the
 * Authorization header, and the token must never go in a URL
 * (docs/decisions.md "The console keeps its token in memory"). The
 * server-sent events are parsed here; after a drop the stream is opened
 * again with `Last-Event-ID`, so the events written meanwhile arrive.
 */
import { authorization } from './api.js'

export interface StreamEvent { id?: string, event: string, data: string }
export type StreamState = 'conectando' | 'conectado' | 'reconectando' | 'terminado'

/** Reasons after which reconnecting is pointless: sign in again first (user guide, `fin`). */
const FINAL = new Set(['sesion', 'expirado', 'permisos'])
const RETRY_MS = [1_000, 2_000, 5_000, 10_000]

/** Feeds each complete message of `text` (kept partial lines in `rest`) to `emit`. */
export function parseChunk (buffer: { rest: string, data: string[], event: string, id?: string }, text: string, emit: (m: StreamEvent) => void): void {
  const lines = (buffer.rest + text).split(/\r\n|\r|\n/)
  buffer.rest = lines.pop() ?? ''
  for (const line of lines) {
    if (line === '') {
      if (buffer.data.length > 0) emit({ ...(buffer.id !== undefined && { id: buffer.id }), event: buffer.event || 'message', data: buffer.data.join('\n') })
      buffer.data = []
      buffer.event = ''
      continue
    }
    if (line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'data') buffer.data.push(value)
    else if (field === 'event') buffer.event = value
    else if (field === 'id') buffer.id = value
  }
}

/**
 * Opens `path` and keeps it open until the returned stop is called or the
 * service ends it for good (`fin` with sesion, expirado or permisos, or a
 * 4xx answer). `onState` says whether it is live.
 */
export function openStream (path: string, onMessage: (m: StreamEvent) => void, onState: (s: StreamState, detail?: string) => void): () => void {
  const abort = new AbortController()
  let lastId: string | undefined
  let attempt = 0
  let stopped = false

  const run = async (): Promise<void> => {
    while (!stopped) {
      onState(attempt === 0 ? 'conectando' : 'reconectando')
      let final: string | undefined
      try {
        const headers: Record<string, string> = { Accept: 'text/event-stream', ...authorization() }
        if (lastId !== undefined) headers['Last-Event-ID'] = lastId
        const res = await fetch(path, { headers, cache: 'no-store', credentials: 'omit', signal: abort.signal })
        if (res.status >= 400 && res.status < 500 && res.status !== 429) {
          const body = await res.json().catch(() => undefined) as { error?: string } | undefined
          final = body?.error ?? `Error ${res.status}`
        } else if (res.ok && res.body !== null) {
          onState('conectado')
          attempt = 0
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
          const buffer = { rest: '', data: [] as string[], event: '' }
          for (;;) {
            const { value, done } = await reader.read()
            if (done) break
            parseChunk(buffer, value, (m) => {
              if (m.id !== undefined) lastId = m.id
              if (m.event === 'fin') {
                const motivo = (JSON.parse(m.data) as { motivo?: string }).motivo ?? ''
                if (FINAL.has(motivo)) final = `Flujo terminado (${motivo})`
              }
              onMessage(m)
            })
          }
        }
      } catch {
        // A dropped connection or the stop: tried again below unless stopped.
      }
      if (stopped) return
      if (final !== undefined) {
        onState('terminado', final)
        return
      }
      const wait = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!
      attempt++
      onState('reconectando')
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
  void run()
  return () => {
    stopped = true
    abort.abort()
  }
}
