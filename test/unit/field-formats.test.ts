/**
 * The field formats of core/field-types/formats/ (docs/administrator-guide.md
 * "modules.yaml reference"), each check on its own: what it accepts, the one
 * form it stores, what it refuses and in which words; and what every format
 * declares holds together (its examples pass its own check, its pattern
 * takes what the check stores and the empty string).
 */
import { describe, expect, it } from 'vitest'
import { FIELD_FORMATS, FORMATS, filterText, shapeOf } from '../../core/field-types/formats/index.js'
import { dniLetter } from '../../core/field-types/formats/dni.js'
import { Rejected } from '../../core/field-types/types.js'

const check = (name: 'dni' | 'telefono', value: string): string => {
  const out = FORMATS[name].check(value)
  return out instanceof Rejected ? `! ${out.mensaje}` : out
}
const fits = (name: 'dni' | 'telefono', value: string): boolean => new RegExp(FORMATS[name].pattern, 'u').test(value)

describe('every format', () => {
  it('is named in the index, in its order', () => {
    expect(FIELD_FORMATS).toEqual(['dni', 'euros', 'telefono'])
  })

  it.each(FIELD_FORMATS)('%s: its examples are valid, the OpenAPI one as stored', (name) => {
    const format = FORMATS[name]
    if (format.type === 'decimal') {
      expect(typeof format.example).toBe('number')
      expect(typeof format.importSample).toBe('number')
      return
    }
    expect(format.check(format.example)).toBe(format.example)
    expect(format.check(format.importSample)).not.toBeInstanceOf(Rejected)
    const pattern = new RegExp(format.pattern, 'u')
    for (const v of [format.example, format.importSample, '', '   ']) expect(pattern.test(v), v).toBe(true)
    expect(format.check('')).toBe('')
  })

  it('a filter value is written as its format stores it when it fits, else as typed', () => {
    expect(filterText({ format: 'telefono' }, '600 11 22 33')).toBe('+34600112233')
    expect(filterText({ format: 'telefono' }, '600 11')).toBe('600 11')
    expect(filterText({ format: 'dni' }, ' 12345678z')).toBe('12345678Z')
    expect(filterText({ format: 'euros' }, '10.5')).toBe('10.5')
    expect(filterText({}, ' x ')).toBe(' x ')
    expect(shapeOf({ format: 'euros' })).toBeUndefined()
  })
})

describe('dni', () => {
  it.each([['12345678Z', '12345678Z'], [' 00000000t ', '00000000T'], ['x1234567l', 'X1234567L'], ['Y1234567X', 'Y1234567X'], ['Z1234567R', 'Z1234567R'], ['', '']])('%j is stored %j', (typed, stored) => {
    expect(check('dni', typed)).toBe(stored)
    expect(fits('dni', typed)).toBe(true)
  })

  it.each(['12345678A', 'X1234567A', '00000000A'])('%s: a wrong check letter', (typed) => {
    expect(fits('dni', typed)).toBe(true)
    expect(check('dni', typed)).toBe('! letra de control incorrecta')
  })

  it.each(['12345678-Z', '1234567Z', '12345678', 'A1234567L', '12 345678Z'])('%s: not of the shape', (typed) => {
    expect(fits('dni', typed)).toBe(false)
    expect(check('dni', typed)).toMatch(/^! no es un DNI/)
  })

  it('the letter is TRWAGMYFPDXBNJZSQVHLCKE by the number mod 23', () => {
    expect([0, 1, 22, 23, 12345678].map(dniLetter).join('')).toBe('TRETZ')
  })
})

describe('telefono', () => {
  it.each([
    ['600112233', '+34600112233'],
    ['600 11 22 33', '+34600112233'],
    [' 912 345 678 ', '+34912345678'],
    ['+34 600 11 22 33', '+34600112233'],
    ['+34600112233', '+34600112233'],
    ['0034 699 000 111', '+34699000111'],
    ['+ 34 711 222 333', '+34711222333'],
    ['+44 20 7946 0958', '+442079460958'],
    ['0049 30 1234567', '+49301234567'],
    ['+1 202 555 0143', '+12025550143'],
    ['+683 4002', '+6834002'],
    ['', ''],
  ])('%j is stored %j', (typed, stored) => {
    expect(fits('telefono', typed)).toBe(true)
    expect(check('telefono', typed)).toBe(stored)
  })

  it.each(['+34 512 345 678', '+34 60011223', '+34 6001122334', '0034 123456789'])('%s: a Spanish number of another shape', (typed) => {
    expect(fits('telefono', typed)).toBe(true)
    expect(check('telefono', typed)).toBe('! un teléfono español tiene 9 cifras y empieza por 6, 7, 8 o 9')
  })

  it.each(['512345678', '60011223', '6001122334', '600-11-22-33', '(+34) 600112233', '600.11.22.33', '+0 600112233', '+1234567890123456', '+12 345', 'seiscientos', '600112233 ext 2'])('%s: not a telephone', (typed) => {
    expect(fits('telefono', typed)).toBe(false)
    expect(check('telefono', typed)).toBe('! no es un teléfono: 9 cifras, o + y el prefijo del país')
  })

  it('asks for it on the telephone keypad, without the browser\'s autofill, and is filtered by the whole number', () => {
    expect(FORMATS.telefono.input).toMatchObject({ type: 'tel', inputMode: 'tel', autocomplete: 'off' })
    expect(FORMATS.telefono.filter).toBe('equals')
  })
})

describe('euros', () => {
  it('is a decimal that checks nothing more, asked for with a decimal comma and filtered by a range', () => {
    expect(FORMATS.euros).toMatchObject({ type: 'decimal', description: 'Importe en euros', filter: 'range', input: { inputMode: 'decimal' } })
    expect('check' in FORMATS.euros).toBe(false)
  })
})
