/**
 * records/python-literal.ts alone: the lists Python's str() writes (what
 * pandas puts in a CSV cell holding a list) read as their values; anything
 * else, and anything past a JSON body's bounds, is no list. Through HTTP:
 * test/integration/csv-dialects.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { pythonList } from '../../records/python-literal.js'

describe('pythonList', () => {
  it.each([
    ["['a', 'b']", ['a', 'b']],
    ['[]', []],
    ["[1, -2.5, 3e2, True, False, None]", [1, -2.5, 300, true, false, null]],
    ["[{'nombre': 'Luis', 'dni': None}, {}]", [{ nombre: 'Luis', dni: null }, {}]],
    [`["it's", 'Dijo "basta"', 'it\\'s "x"']`, ["it's", 'Dijo "basta"', 'it\'s "x"']],
    ["['a\\tb\\nc\\\\', '\\xe9\\u00f1\\U0001F600']", ['a\tb\nc\\', 'éñ😀']],
    ["[['a'], [1, [2]],]", [['a'], [1, [2]]]],
  ])('%s', (text, value) => {
    expect(pythonList(text)).toEqual(value)
  })

  it('keeps a __proto__ key as data', () => {
    const [item] = pythonList("[{'__proto__': {'x': 1}}]") as Array<Record<string, unknown>>
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype)
    expect(Object.keys(item!)).toEqual(['__proto__'])
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })

  it.each([
    "['a', nan]", "('a', 'b')", "{'a': 1}", "['a' 'b']", "['a',, 'b']", "['a'", "['a'] + ['b']", "[{1: 'a'}]",
    "['\\q']", "['\\x4']", "['\\U00110000']", "[inf]", "[1e400]", "['a\nb']", "[True", 'hola',
  ])('%j is no list', (text) => {
    expect(pythonList(text)).toBeUndefined()
  })

  it('is bounded as a JSON body: 32 levels, 20,000 values', () => {
    expect(pythonList('['.repeat(32) + ']'.repeat(32))).toBeDefined()
    expect(pythonList('['.repeat(32) + "'a'" + ']'.repeat(32))).toBeDefined()
    expect(pythonList('['.repeat(31) + "{'a': 1}" + ']'.repeat(31))).toBeDefined()
    expect(pythonList('['.repeat(32) + "{'a': 1}" + ']'.repeat(32))).toBeUndefined()
    expect(pythonList('['.repeat(33) + ']'.repeat(33))).toBeUndefined()
    expect(pythonList('[' + '1, '.repeat(20_000) + ']')).toHaveLength(20_000)
    expect(pythonList('[' + '1, '.repeat(20_001) + ']')).toBeUndefined()
    expect(pythonList('['.repeat(100_000))).toBeUndefined()
  })
})
