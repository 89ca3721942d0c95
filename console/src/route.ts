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

function current (): Route {
  const [path = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?')
  return { path: path.split('/').filter((s) => s !== '').map(decodeURIComponent), params: new URLSearchParams(query) }
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

export function href (path: string[], params?: Record<string, string | undefined>): string {
  const query = new URLSearchParams(Object.entries(params ?? {}).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')).toString()
  return `#/${path.map(encodeURIComponent).join('/')}${query === '' ? '' : `?${query}`}`
}
