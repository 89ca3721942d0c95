/**
 * A `Range` request header over a file of `size` bytes (RFC 9110 §14):
 * one range of bytes (`a-b`, `a-`, `-n`) is served as 206; several, a
 * unit other than bytes or a malformed header are ignored (the whole file,
 * 200, as the RFC allows); a range that starts past the end is 416.
 */
import { AppError } from '../core/errors.js'

export interface Range {
  readonly start: number
  readonly end: number
}

/** The range to serve, undefined for the whole file; 416 when it cannot be satisfied. */
export function byteRange (header: string | undefined, size: number): Range | undefined {
  if (header === undefined) return undefined
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (m === null || (m[1] === '' && m[2] === '')) return undefined
  const unsatisfiable = (): AppError => new AppError('RANGO_NO_SATISFACIBLE', undefined, { 'content-range': `bytes */${size}` })
  if (m[1] === '') {
    const suffix = Number(m[2])
    if (suffix === 0 || size === 0) throw unsatisfiable()
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (m[2] !== '' && Number(m[2]) < start) return undefined
  if (start >= size) throw unsatisfiable()
  return { start, end }
}
