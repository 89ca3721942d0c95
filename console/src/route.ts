/**
 * Where the console is: the part of the address after `#` (the page itself
 * never reloads, so the token kept in memory survives navigation).
 * `#/denuncias?q=…&sort=…&pagina=2` a list, `#/denuncias/DEN-2026-00001` a record.
 */
import { useEffect, useState } from 'preact/hooks'

export interface Route {
  path: string[]
  params: URLSearchParams
}

/** The route an address's `#…` names (`#/denuncias/DEN-2026-00001`: path `['denuncias', 'DEN-2026-00001']`). */
export function routeOf (hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?')
  return { path: path.split('/').filter((s) => s !== '').map(decodeURIComponent), params: new URLSearchParams(query) }
}

function current (): Route {
  return routeOf(location.hash)
}

export function useRoute (): Route {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const update = (): void => setRoute(current())
    addEventListener('hashchange', update)
    return () => removeEventListener('hashchange', update)
  }, [])
  return route
}

/** The address of a route: each path segment encoded, empty parameters left out. */
export function href (path: string[], params?: Record<string, string | undefined>): string {
  const query = new URLSearchParams(Object.entries(params ?? {}).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')).toString()
  return `#/${path.map(encodeURIComponent).join('/')}${query === '' ? '' : `?${query}`}`
}
