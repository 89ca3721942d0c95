/**
 * People by name (docs/user-guide.md "Console", "People by name
 * (directorio)"): where a record names a user or a staff member by id
 * (created by, history, custody, a reference to personal), the console
 * shows the name, the id on hover. The ids a screen draws in one go are
 * asked for in one GET /directorio (200 at most per request) and kept for
 * the session; an id the directory does not know (a vehicle, `SISTEMA`)
 * stays as it is.
 */
import { useEffect, useState } from 'preact/hooks'
import { request } from './api.js'

const MAX_IDS = 200
/** A record id (`USR-2026-00001`, `PER-2026-00001`): nothing else is asked about. */
const ID = /^[A-Z0-9]{2,6}-\d{4}-\d{5,}$/
const SYSTEM: Record<string, string> = { SISTEMA: 'Sistema' }

/** A name by id; null: asked, nobody. */
const names = new Map<string, string | null>()
const wanted = new Set<string>()
const listeners = new Set<() => void>()
let pending = false

function flush (): void {
  pending = false
  const ids = [...wanted]
  wanted.clear()
  for (let i = 0; i < ids.length; i += MAX_IDS) {
    const chunk = ids.slice(i, i + MAX_IDS)
    request<{ data: Array<{ id: string, nombre: string }> }>('GET', `/directorio?ids=${encodeURIComponent(chunk.join(','))}`).then((res) => {
      for (const id of chunk) names.set(id, null)
      for (const p of res.data) names.set(p.id, p.nombre)
    }, () => {
      // Not asked again this session: the ids stay as they are.
      for (const id of chunk) names.set(id, null)
    }).finally(() => { for (const l of listeners) l() })
  }
}

/** Asks for `id`'s name with the others of this moment (once per session). */
function want (id: string): void {
  if (names.has(id) || !ID.test(id)) return
  names.set(id, null)
  wanted.add(id)
  if (!pending) {
    pending = true
    // After every cell of the screen has asked: one request for them all.
    setTimeout(flush, 0)
  }
}

/** Forgets the names (at sign-out: the next session asks again). */
export function forgetPeople (): void {
  names.clear()
  wanted.clear()
}

/** The name of `id` once known; undefined until then or when nobody. */
export function usePersonName (id: string | undefined): string | undefined {
  const [, setTick] = useState(0)
  const shown = id === undefined ? undefined : SYSTEM[id] ?? names.get(id) ?? undefined
  useEffect(() => {
    if (id === undefined) return
    const update = (): void => setTick((t) => t + 1)
    listeners.add(update)
    want(id)
    // An answer that came between the render and this effect told no one: draw it now
    // (seen as a history that kept an author's id beside a "Creado por" already named).
    if ((SYSTEM[id] ?? names.get(id) ?? undefined) !== shown) update()
    return () => { listeners.delete(update) }
  }, [id])
  return shown
}

/** A user or staff member: the name, the id on hover; the id alone when unknown. */
export function Person ({ id }: { id: string }) {
  const name = usePersonName(id)
  if (name === undefined) return <>{id}</>
  return <span class="person" title={id}>{name}</span>
}
