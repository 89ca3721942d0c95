/**
 * A request URL as it may be written to the log (docs/operator-guide.md "Logs"): the
 * value of every query parameter that names a secret (an encrypted field,
 * whose filter carries a DNI in clear, a password or a token) or carries
 * free text a person typed (`q`, any `[contiene]`, also inside a group of
 * brackets) is replaced by `[oculto]`. Names are compared as the query
 * parser reads them (percent and `+` decoded, operator suffix `[op]`
 * ignored), so an encoded name hides nothing; a name that does not decode
 * hides its value too.
 */

export const HIDDEN = '[oculto]'

/** Parameter names whose value is secret whatever the module: credentials. */
const ALWAYS = /password|contrase|token|secret|clave|jwt/i

/** Free-text search (docs/user-guide.md "Search"): a name, or a part of it between brackets, that is `q` or `contiene`. */
const freeText = (name: string): boolean => name.split(/[[\]]/).some((part) => /^\s*(?:q|contiene)\s*$/i.test(part))

function decoded (name: string): string | undefined {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '))
  } catch {
    return undefined
  }
}

/** Whether a query parameter of this raw name carries a secret. */
function secret (rawName: string, names: ReadonlySet<string>): boolean {
  const name = decoded(rawName)
  if (name === undefined) return true
  const base = name.replace(/\[.*$/s, '').trim()
  return names.has(base) || ALWAYS.test(name) || freeText(name)
}

export function logSafeUrl (url: string, names: ReadonlySet<string>): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const pairs = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=')
    const name = eq < 0 ? pair : pair.slice(0, eq)
    return eq >= 0 && secret(name, names) ? `${name}=${HIDDEN}` : pair
  })
  return `${url.slice(0, q)}?${pairs.join('&')}`
}
