/** The 30-minute idle end (docs/user-guide.md "Console"): no key or pointer for that long signs the session out. */

export const IDLE_MS = 30 * 60 * 1000
const EVENTS = ['keydown', 'pointerdown', 'wheel', 'touchstart'] as const

/** Calls `end` after IDLE_MS without activity; returns the stop. */
export function watchIdle (end: () => void): () => void {
  let timer = setTimeout(end, IDLE_MS)
  const reset = (): void => {
    clearTimeout(timer)
    timer = setTimeout(end, IDLE_MS)
  }
  for (const e of EVENTS) addEventListener(e, reset, { passive: true })
  return () => {
    clearTimeout(timer)
    for (const e of EVENTS) removeEventListener(e, reset)
  }
}
