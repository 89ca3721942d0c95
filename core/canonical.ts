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

/** Whether keys come in canonical order already (a hash payload is built in it): then nothing is sorted. */
function ascending (keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (!(keys[i - 1]! < keys[i]!)) return false
  return true
}

const scalar = (v: unknown): boolean => v === null || v === undefined || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'

/**
 * Whether JSON.stringify writes `obj` (its keys in canonical order) as this
 * file does: a plain object whose every value is a scalar or an array of
 * scalars, nothing it would order or convert its own way (a nested object,
 * a Date, a boxed string). A record's hash payload and a chain entry are
 * such objects (docs/performance.md "A create beside the ceiling's").
 */
function flat (obj: Record<string, unknown>, keys: readonly string[]): boolean {
  const proto: unknown = Object.getPrototypeOf(obj)
  if (proto !== Object.prototype && proto !== null) return false
  for (const k of keys) {
    const v = obj[k]
    if (scalar(v)) continue
    if (!Array.isArray(v)) return false
    for (let i = 0; i < v.length; i++) if (!scalar(v[i])) return false
  }
  return true
}

export function canonicalJson (value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null)
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i])
    return out + ']'
  }
  const obj = value as Record<string, unknown>
  let keys = Object.keys(obj)
  if (!ascending(keys)) keys = keys.sort()
  else if (flat(obj, keys)) return JSON.stringify(obj)
  let out = '{'
  for (const k of keys) {
    const v = obj[k]
    if (v === undefined) continue
    out += (out.length === 1 ? '' : ',') + member(k) + canonicalJson(v)
  }
  return out + '}'
}
