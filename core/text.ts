/**
 * What text the service stores. PostgreSQL cannot hold NUL in text or
 * jsonb, and a lone UTF-16 surrogate would be replaced (text) or refused
 * (jsonb); other control characters are never meaningful in a record. So a
 * string is accepted only when it is well-formed Unicode and holds no
 * control character other than tab, line feed and carriage return.
 */

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/

export function isCleanText (s: string): boolean {
  return s.isWellFormed() && !CONTROL.test(s)
}

/** Deepest nesting accepted inside array fields (an item object is depth 1). */
export const MAX_DEPTH = 4

/**
 * Checks every string and key inside a JSON value (array fields) and its
 * depth; returns what is wrong, or undefined when it is acceptable.
 */
export function jsonProblem (value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') return isCleanText(value) ? undefined : 'contiene caracteres de control o texto mal formado'
  if (value === null || typeof value !== 'object') return undefined
  if (depth >= MAX_DEPTH) return `admite como máximo ${MAX_DEPTH} niveles de anidamiento`
  const entries = Array.isArray(value) ? value.map((v) => ['', v] as const) : Object.entries(value)
  for (const [k, v] of entries) {
    if (!isCleanText(k)) return 'contiene caracteres de control o texto mal formado'
    const p = jsonProblem(v, depth + 1)
    if (p !== undefined) return p
  }
  return undefined
}
