/** db/placeholders.ts alone: `?` as `$n`, numbered on from an offset. */
import { describe, expect, it } from 'vitest'
import { numberPlaceholders } from '../../db/placeholders.js'

describe('numberPlaceholders', () => {
  it('numbers from $1, or on from the values already taken', () => {
    expect(numberPlaceholders('a = ? and b = ?')).toEqual({ text: 'a = $1 and b = $2', count: 2 })
    expect(numberPlaceholders('a = ? and b = ?', 3)).toEqual({ text: 'a = $4 and b = $5', count: 2 })
  })

  it('leaves a text without `?` as it is', () => {
    expect(numberPlaceholders('a = $1', 5)).toEqual({ text: 'a = $1', count: 0 })
  })
})
