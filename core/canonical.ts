/**
 * Canonical JSON (docs/operator-guide.md "The hash chain"): object keys sorted by UTF-16 code units at every
 * depth, no insignificant white space, arrays in order. Used for `_hash`. Built by appending to one string,
 * not by mapping and joining: every create seals a version (docs/performance.md "Cheaper by the request").
 */
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
    out += (out.length === 1 ? '' : ',') + JSON.stringify(k) + ':' + canonicalJson(v)
  }
  return out + '}'
}
