import { expect } from 'vitest'

/** `text` with `from` replaced by `to`; fails loudly unless `from` occurs exactly once (a test's edit of modules.yaml must not go stale). */
export function edit (text: string, from: string, to: string): string {
  expect(text.split(from).length - 1, `"${from}" must occur exactly once`).toBe(1)
  return text.replace(from, to)
}
