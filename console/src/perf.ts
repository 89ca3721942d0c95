/**
 * The performance marks the console sets for its benchmark (`npm run
 * bench:console`, docs/performance.md "The console"): a list's data
 * arriving, and the frame after its table is painted. Only marks: nothing
 * is sent anywhere.
 */

export const LIST_DATA = 'consola:lista-datos'
export const LIST_RENDER = 'consola:lista-render'

/** The data of a list arrived (its JSON parsed). */
export function markListData (): void {
  performance.mark(LIST_DATA)
}

/** Called once the table is in the DOM: measures to the end of the frame that paints it. */
export function measureListRender (): void {
  if (performance.getEntriesByName(LIST_DATA, 'mark').length === 0) return
  requestAnimationFrame(() => setTimeout(() => {
    performance.measure(LIST_RENDER, LIST_DATA)
    performance.clearMarks(LIST_DATA)
  }, 0))
}
