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
  it('writes any JSON value exactly as the first implementation did', () => {
    const first = (value: unknown): string => {
      if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null)
      if (Array.isArray(value)) return `[${value.map(first).join(',')}]`
      const obj = value as Record<string, unknown>
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort()
      return `{${keys.map((k) => `${JSON.stringify(k)}:${first(obj[k])}`).join(',')}}`
    }
    const value = fc.letrec((tie) => ({
      any: fc.oneof({ depthSize: 'small' }, fc.constant(undefined), fc.jsonValue({ maxDepth: 1 }), fc.array(tie('any'), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('any'), { maxKeys: 5 })),
    })).any
    fc.assert(fc.property(value, (v) => { expect(canonicalJson(v)).toBe(first(v)) }), { numRuns: 2_000 })
  })
})
