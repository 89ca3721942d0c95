/**
 * The answers of core/errors.ts as tests expect them: a test names the
 * error's code and gets its status and exact text from the one table
 * (test/unit/errors-table.test.ts holds that table to docs/user-guide.md
 * "Errors", so a changed text still fails a test).
 */
import { expect } from 'vitest'
import { ERRORS, type ErrorCode, type ErrorDetail } from '../../core/errors.js'

export interface ErrorEnvelope {
  success: false
  error: string
  codigo: ErrorCode
  detalles?: ErrorDetail[]
}

/** The body of error `code`, with `detalles` when given. */
export function errorOf (code: ErrorCode, detalles?: ErrorDetail[]): ErrorEnvelope {
  return { success: false, error: ERRORS[code].message, codigo: code, ...(detalles !== undefined && { detalles }) }
}

/** `res` is error `code`: its status, its text and its `codigo` (other keys of the body are not looked at). */
export function expectError (res: { status: number, body: unknown }, code: ErrorCode): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status: ERRORS[code].status, body: errorOf(code) })
}

/** Text → code of every error: which `codigo` must stand beside a text. */
export const CODE_BY_TEXT: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(ERRORS).map(([code, e]) => [e.message, code]))

/** Text → status of the errors `codes`: the answers a client may get in some situation. */
export function statusByText (codes: readonly ErrorCode[]): Record<string, number> {
  return Object.fromEntries(codes.map((c) => [ERRORS[c].message, ERRORS[c].status]))
}
