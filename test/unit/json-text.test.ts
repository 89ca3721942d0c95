/**
 * The checks on a body's JSON text (core/json-text.ts): the shortcut that
 * skips the scan for short, flat bodies never hides a problem the scan
 * finds, for any JSON text, nested or with numbers a double cannot hold.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonTextProblem, MAX_TEXT_DEPTH, scanJsonText } from '../../core/json-text.js'

/** Number tokens around a double's limits, as JSON text. */
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom('1e400', '-1e400', '1E+999', '1e-400', '0.' + '0'.repeat(400) + '1', '1' + '0'.repeat(400), '12345678901234567', '-0.000000000000001', '1e5', '123456789012345'),
)

/** JSON text of arbitrary values, some nested past MAX_TEXT_DEPTH, with such numbers inside. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    fc.string().map((s) => JSON.stringify(s)),
    fc.constantFrom('true', 'null'),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc.array(fc.tuple(fc.string({ maxLength: 6 }), tie('value')), { maxLength: 4 }).map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value

describe('jsonTextProblem', () => {
  it('answers as the full scan does, for any JSON text', () => {
    fc.assert(fc.property(jsonText, fc.nat({ max: 40 }), (inner, wrap) => {
      const text = '['.repeat(wrap) + inner + ']'.repeat(wrap)
      expect(jsonTextProblem(text)).toEqual(scanJsonText(text))
    }), { numRuns: 2000 })
  })

  it('still finds each kind of problem', () => {
    expect(jsonTextProblem('['.repeat(MAX_TEXT_DEPTH + 1) + ']'.repeat(MAX_TEXT_DEPTH + 1))).toEqual({ kind: 'depth' })
    // 20,000 separators are allowed, 20,001 are not, whichever way the text is checked.
    for (const [n, problem] of [[20_000, undefined], [20_001, { kind: 'values' }]] as const) {
      expect(jsonTextProblem(`[${'1,'.repeat(n)}1]`)).toEqual(problem)
      expect(scanJsonText(`[${'1,'.repeat(n)}1]`)).toEqual(problem)
    }
    expect(jsonTextProblem('{"importe":1e400}')).toEqual({ kind: 'number', field: 'importe' })
    expect(jsonTextProblem(`{"a":"x","importe":1${'0'.repeat(400)}}`)).toEqual({ kind: 'number', field: 'importe' })
    expect(jsonTextProblem('{"importe":12.5,"tags":["1e400"]}')).toBeUndefined()
  })
})
