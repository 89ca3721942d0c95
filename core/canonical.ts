/**
 * Canonical JSON (docs/operator-guide.md "The hash chain"): object keys sorted by UTF-16 code units at every
 * depth, no insignificant white space, arrays in order. Used for `_hash`. Built by appending to one string,
 * not by mapping and joining: every create seals a version (docs/performance.md "Cheaper by the request").
 */
/** Each key written as `"key":`, kept: a module's field names recur in every hash (at most KEYS_KEPT of them). */
const quoted = new Map<string, string>()
const KEYS_KEPT = 10_000

function member (k: string): string {
  let q = quoted.get(k)
  if (q === undefined) {
    q = JSON.stringify(k) + ':'
    if (quoted.size < KEYS_KEPT) quoted.set(k, q)
  }
  return q
}

export function canonicalJson (value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null)
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i])
    return out + ']'
  }
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj).sort()
  let out = '{'
  for (const k of keys) {
    const v = obj[k]
    if (v === undefined) continue
    out += (out.length === 1 ? '' : ',') + member(k) + canonicalJson(v)
  }
  return out + '}'
}
