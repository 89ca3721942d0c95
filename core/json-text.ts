/**
 * Checks on a request body's JSON text that must happen before (or cannot
 * happen after) `JSON.parse`, in one pass over the characters:
 *
 * - nesting deeper than MAX_TEXT_DEPTH: no body the service takes nests
 *   deeper than about six levels, and building a million nested arrays only
 *   to refuse them costs the event loop tens of milliseconds and as much
 *   again in garbage collection;
 * - more than MAX_TEXT_VALUES values in all (array items and object
 *   members): parsing a hundred thousand distinct keys costs V8 tens of
 *   milliseconds (docs/performance.md "Figures behind the code's choices"),
 *   and a record with as many values nested in an array item far more to hash and store,
 *   while the largest body a person writes holds a few thousand;
 * - a number a double cannot hold: `1e400` parses as Infinity (and is then
 *   written as null), `1e-400` as 0. Both would change the value silently.
 *
 * The scan is tolerant: text that is not JSON is left to `JSON.parse`.
 */

/** Deepest nesting of arrays and objects a body may have (a record body needs about 6). */
export const MAX_TEXT_DEPTH = 32

/** Most values (array items plus object members) a body may hold in all. */
export const MAX_TEXT_VALUES = 20_000

export type JsonTextProblem =
  | { kind: 'depth' }
  | { kind: 'values' }
  /** `field`: the top-level key the number sits under, undefined when the body is not an object. */
  | { kind: 'number', field: string | undefined }

const QUOTE = 34
const BACKSLASH = 92
const OPEN_ARRAY = 91
const CLOSE_ARRAY = 93
const OPEN_OBJECT = 123
const CLOSE_OBJECT = 125
const MINUS = 45
const COMMA = 44
const COLON = 58

const isNumberChar = (c: number): boolean => (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46 || c === 69 || c === 101

/** Index of the quote that closes the string opened at `start`, or -1. */
function stringEnd (text: string, start: number): number {
  let i = start
  for (;;) {
    i = text.indexOf('"', i + 1)
    if (i < 0) return -1
    let slashes = 0
    for (let j = i - 1; text.charCodeAt(j) === BACKSLASH; j--) slashes++
    if (slashes % 2 === 0) return i
  }
}

/**
 * A number token that a double cannot hold: it overflows to ±Infinity, or
 * has a non-zero digit and still reads as 0. Only tokens with an exponent or
 * over 15 characters can do either.
 */
function outOfRange (token: string): boolean {
  if (token.length <= 15 && !/[eE]/.test(token)) return false
  const n = Number(token)
  if (Number.isNaN(n)) return false // not a JSON number: JSON.parse will say so
  if (!Number.isFinite(n)) return true
  return n === 0 && /[1-9]/.test(token.split(/[eE]/)[0]!)
}

/**
 * A number token a double may not hold has an exponent (a digit then `e`)
 * or over 15 characters, 15 of them digits or points: text without either
 * holds none.
 */
const NUMBER_SUSPECT = /[0-9][eE]|[0-9.]{15}/

/**
 * Whether the text is too short and too flat to hold any problem, found
 * with native searches instead of the scan below (a record's body is
 * usually both: docs/performance.md "A lone request"). Over
 * MAX_TEXT_VALUES separators need more characters than that; deeper than
 * MAX_TEXT_DEPTH needs more opening brackets, counted here in strings too.
 */
function plainEnough (text: string): boolean {
  if (text.length > MAX_TEXT_VALUES) return false
  let brackets = 0
  for (const open of ['{', '[']) {
    for (let i = text.indexOf(open); i >= 0; i = text.indexOf(open, i + 1)) if (++brackets > MAX_TEXT_DEPTH) return false
  }
  return !NUMBER_SUSPECT.test(text)
}

/** The first problem of the text, or undefined. */
export function jsonTextProblem (text: string): JsonTextProblem | undefined {
  return plainEnough(text) ? undefined : scanJsonText(text)
}

/** jsonTextProblem without its shortcut: every character looked at (test/unit/json-text.test.ts compares the two). */
export function scanJsonText (text: string): JsonTextProblem | undefined {
  let depth = 0
  /** Separators outside strings: a value follows each comma, a member each colon. */
  let separators = 0
  let topIsObject = false
  /** The last string seen directly inside the top-level object: the key whose value is being read. */
  let keyStart = -1
  let keyEnd = -1
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = stringEnd(text, i)
      if (end < 0) return undefined
      if (depth === 1 && topIsObject) { keyStart = i; keyEnd = end }
      i = end
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (depth === 0) topIsObject = c === OPEN_OBJECT
      if (++depth > MAX_TEXT_DEPTH) return { kind: 'depth' }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--
    } else if (c === COMMA || c === COLON) {
      if (++separators > MAX_TEXT_VALUES) return { kind: 'values' }
    } else if ((c >= 48 && c <= 57) || c === MINUS) {
      let j = i + 1
      while (j < n && isNumberChar(text.charCodeAt(j))) j++
      if (outOfRange(text.slice(i, j))) return { kind: 'number', field: topIsObject && keyStart >= 0 ? keyName(text, keyStart, keyEnd) : undefined }
      i = j - 1
    }
  }
  return undefined
}

function keyName (text: string, start: number, end: number): string | undefined {
  try {
    return JSON.parse(text.slice(start, end + 1)) as string
  } catch {
    return undefined
  }
}
