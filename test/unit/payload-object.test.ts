/**
 * payloadObject (records/payload-object.ts): the object it makes is the one
 * a loop of keyed stores makes (same keys, same order, members whose value
 * is undefined left out, so the same canonical JSON and hash), and V8 keeps
 * it in fast mode where that loop's object past 16 members is a dictionary
 * (the reason for the file; checked in a fresh process, where no other
 * object made the same keys' shapes first).
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../core/canonical.js'
import { payloadObject } from '../../records/payload-object.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** What hashPayload made before: members stored one by one into `{}`. */
function keyed (keys: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  keys.forEach((k, i) => { if (values[i] !== undefined) out[k] = values[i] })
  return out
}

const name = fc.stringMatching(/^[a-zñ_][a-z0-9_ñ]{0,20}$/)
const value = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string(), fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 3 }))

describe('payloadObject', () => {
  it('makes the keyed loop\'s object: same members in the same order, undefined ones left out', () => {
    fc.assert(fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 40 }).chain((keys) =>
      fc.tuple(fc.constant([...keys].sort()), fc.array(value, { minLength: keys.length, maxLength: keys.length }))), ([keys, values]) => {
      const made = payloadObject(keys)(values)
      const loop = keyed(keys, values)
      expect(Object.keys(made)).toEqual(Object.keys(loop))
      expect(made).toStrictEqual(loop)
      expect(canonicalJson(made)).toBe(canonicalJson(loop))
    }))
  })

  it('writes a key as a string literal, never as code', () => {
    const keys = ['a"b', 'c\\d', 'e\nf', '__x', 'ñandú']
    expect(payloadObject(keys)(['1', '2', '3', '4', '5'])).toStrictEqual({ 'a"b': '1', 'c\\d': '2', 'e\nf': '3', __x: '4', ñandú: '5' })
  })

  it('is kept in fast mode where 24 keyed stores make a dictionary (V8)', () => {
    const code = `
      const { payloadObject } = await import('./records/payload-object.ts')
      const keys = Array.from({ length: 24 }, (_, i) => 'campo_' + String(i).padStart(2, '0'))
      const loop = {}
      for (const k of keys) loop[k] = 1
      const made = payloadObject(keys)(keys.map(() => 1))
      console.log(JSON.stringify([%HasFastProperties(loop), %HasFastProperties(made)]))`
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual([false, true])
  })
})
