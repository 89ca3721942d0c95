/**
 * Closest-name hints for misspelt names: `hint` for the operators' texts
 * (modules.yaml, environment; English), `apiHint` for the API's error texts
 * a person of the force reads (Spanish).
 */

export function levenshtein (a: string, b: string): number {
  if (a === b) return 0
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost)
    }
    prev = cur
  }
  return prev[b.length]!
}

/** The candidate nearest to `word`, if it is near enough to be a likely typo. */
export function closest (word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const c of candidates) {
    const d = levenshtein(word.toLowerCase(), c.toLowerCase())
    if (d < bestDistance) { best = c; bestDistance = d }
  }
  if (best === undefined) return undefined
  return bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined
}

export function hint (word: string, candidates: Iterable<string>): string {
  const c = closest(word, candidates)
  return c === undefined ? '' : ` (did you mean "${c}"?)`
}

/** As `hint`, in the API's language: ` (¿quería decir "estado"?)`. */
export function apiHint (word: string, candidates: Iterable<string>): string {
  const c = closest(word, candidates)
  return c === undefined ? '' : ` (¿quería decir "${c}"?)`
}
