/**
 * A list as Python writes it (`str(list)`, what pandas' `to_csv` puts in a
 * cell holding one): `['a', 'b']`, `[{'nombre': 'Luis', 'dni': None}]`,
 * `[1, 2.5, True]`. Only the literals `repr` writes: strings in single or
 * double quotes with repr's escapes (`\\`, `\'`, `\"`, `\n`, `\r`, `\t`,
 * `\xhh`, `\uhhhh`, `\Uhhhhhhhh`), integers and decimals, True, False,
 * None, lists and dicts with string keys. Anything else (a tuple, `nan`,
 * a set, an expression) is no value: the import then reports the cell
 * (docs/decisions.md "Python lists in an import"). Bounded as a JSON body
 * is (core/json-text.ts): nesting and the count of values, so a hostile
 * cell cannot exhaust the stack. Pure.
 */
import { MAX_TEXT_DEPTH, MAX_TEXT_VALUES } from '../core/json-text.js'

class NotLiteral extends Error {}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const WORD = /True|False|None/y
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', '\'': '\'', '"': '"', n: '\n', r: '\r', t: '\t' }
const HEX_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 }

/** The list a Python list literal writes, or undefined when `text` is none. */
export function pythonList (text: string): unknown[] | undefined {
  const t = text.trim()
  if (!t.startsWith('[')) return undefined
  try {
    const reader = new Reader(t)
    const value = reader.value(0)
    reader.end()
    return value as unknown[]
  } catch (err) {
    if (err instanceof NotLiteral || err instanceof RangeError) return undefined
    throw err
  }
}

class Reader {
  private at = 0
  private values = 0
  constructor (private readonly text: string) {}

  value (depth: number): unknown {
    // Counted as core/json-text.ts counts a body's: the outermost list is level 1, its items and members are values.
    if (depth > 0 && ++this.values > MAX_TEXT_VALUES) throw new NotLiteral()
    this.space()
    const c = this.text[this.at]
    if ((c === '[' || c === '{') && depth >= MAX_TEXT_DEPTH) throw new NotLiteral()
    if (c === '[') return this.list(depth)
    if (c === '{') return this.dict(depth)
    if (c === '\'' || c === '"') return this.string(c)
    const word = this.match(WORD)
    if (word !== undefined) return word === 'True' ? true : word === 'False' ? false : null
    const number = this.match(NUMBER)
    if (number === undefined || !Number.isFinite(Number(number))) throw new NotLiteral()
    return Number(number)
  }

  end (): void {
    this.space()
    if (this.at !== this.text.length) throw new NotLiteral()
  }

  private list (depth: number): unknown[] {
    const out: unknown[] = []
    this.items(']', () => out.push(this.value(depth + 1)))
    return out
  }

  private dict (depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    this.items('}', () => {
      this.space()
      const q = this.text[this.at]
      if (q !== '\'' && q !== '"') throw new NotLiteral()
      const key = this.string(q)
      this.space()
      if (this.text[this.at++] !== ':') throw new NotLiteral()
      // A key such as __proto__ is kept as data, never as the object's prototype.
      Object.defineProperty(out, key, { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true })
    })
    return out
  }

  /** `open item, item close` (a trailing comma allowed, as Python does); the opening bracket is at `at`. */
  private items (close: string, item: () => void): void {
    this.at++
    this.space()
    if (this.text[this.at] === close) { this.at++; return }
    for (;;) {
      item()
      this.space()
      const c = this.text[this.at++]
      if (c === close) return
      if (c !== ',') throw new NotLiteral()
      this.space()
      if (this.text[this.at] === close) { this.at++; return }
    }
  }

  private string (quote: string): string {
    let out = ''
    this.at++
    for (;;) {
      const c = this.text[this.at++]
      if (c === undefined || c === '\n' || c === '\r') throw new NotLiteral()
      if (c === quote) return out
      if (c !== '\\') { out += c; continue }
      const e = this.text[this.at++] ?? ''
      const length = HEX_LENGTH[e]
      if (length !== undefined) {
        const hex = this.text.slice(this.at, this.at + length)
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== length) throw new NotLiteral()
        // RangeError past U+10FFFF: no value.
        out += String.fromCodePoint(parseInt(hex, 16))
        this.at += length
      } else if (ESCAPES[e] !== undefined) out += ESCAPES[e]
      else throw new NotLiteral()
    }
  }

  private match (re: RegExp): string | undefined {
    re.lastIndex = this.at
    const m = re.exec(this.text)
    if (m === null) return undefined
    this.at += m[0].length
    return m[0]
  }

  private space (): void {
    while (this.text[this.at] === ' ') this.at++
  }
}
