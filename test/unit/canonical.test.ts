/**
 * Canonical JSON (core/canonical.ts), the text every `_hash` is the SHA-256
 * of (docs/operator-guide.md "The hash chain"): its rules, and that any value
 * comes out exactly as the first implementation wrote it, since every stored
 * hash was made with that one.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { canonicalJson } from '../../core/canonical.js'

describe('core/canonical.ts', () => {
  it('sorts keys at every depth, no spaces, arrays in order', () => {
    const value = { b: 1, a: { z: [3, { y: 2, x: 1 }], c: null }, 'ñ': 'x', A: true }
    expect(canonicalJson(value)).toBe('{"A":true,"a":{"c":null,"z":[3,{"x":1,"y":2}]},"b":1,"ñ":"x"}')
    expect(canonicalJson({ y: { b: 2, a: 1 }, x: [{ d: 1, c: 2 }] })).toBe(canonicalJson({ x: [{ c: 2, d: 1 }], y: { a: 1, b: 2 } }))
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}')
    expect(canonicalJson('tú "dijo"')).toBe('"tú \\"dijo\\""')
    expect(canonicalJson([])).toBe('[]')
  })

  // Every stored _hash was made with the first implementation: any value must come out byte for byte the same.
  // (Values with holes, `[, 1]`, differ, and never occur: payloads are built from rows and parsed JSON.)
  const first = (value: unknown): string => {
    if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null)
    if (Array.isArray(value)) return `[${value.map(first).join(',')}]`
    const obj = value as Record<string, unknown>
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${first(obj[k])}`).join(',')}}`
  }

  it('writes any JSON value exactly as the first implementation did', () => {
    const value = fc.letrec((tie) => ({
      any: fc.oneof({ depthSize: 'small' }, fc.constant(undefined), fc.jsonValue({ maxDepth: 1 }), fc.array(tie('any'), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('any'), { maxKeys: 5 })),
    })).any
    fc.assert(fc.property(value, (v) => { expect(canonicalJson(v)).toBe(first(v)) }), { numRuns: 2_000 })
  })

  // An object whose keys come sorted (a hash payload, a chain entry) is written without sorting, by JSON.stringify when flat.
  it('writes objects whose keys come in order as the first implementation did', () => {
    const sortedCopy = (v: unknown): unknown => {
      if (v === null || typeof v !== 'object') return v
      if (Array.isArray(v)) return v.map(sortedCopy)
      const obj = v as Record<string, unknown>
      return Object.fromEntries(Object.keys(obj).sort().map((k) => [k, sortedCopy(obj[k])]))
    }
    const scalar = fc.oneof(fc.constant(undefined), fc.constant(null), fc.boolean(), fc.double(), fc.integer(), fc.string({ unit: 'binary', maxLength: 8 }))
    const flatObject = fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 2 }), scalar, { maxKeys: 2 })), { maxKeys: 8 })
    fc.assert(fc.property(flatObject, (v) => {
      const sorted = sortedCopy(v)
      expect(canonicalJson(sorted)).toBe(first(v))
      expect(canonicalJson(v)).toBe(first(v))
    }), { numRuns: 2_000 })
    // Keys in order, a value that is not: the nested object is still sorted.
    expect(canonicalJson({ a: { z: 1, b: 2 }, b: [{ y: 1, x: 2 }] })).toBe('{"a":{"b":2,"z":1},"b":[{"x":2,"y":1}]}')
    // Not plain objects: written key by key, as ever (a Date has no keys; a boxed string has its letters).
    expect(canonicalJson({ a: new Date(0) })).toBe('{"a":{}}')
    expect(canonicalJson(new Date(0))).toBe('{}')
    expect(canonicalJson(Object.assign(Object.create(null) as object, { a: 1, b: [2] }))).toBe('{"a":1,"b":[2]}')
  })
})
