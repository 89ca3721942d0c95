/**
 * The API's refusal as one line for the user (docs/user-guide.md
 * "Errors"): its `error`, then each of its `detalles` by the field's label,
 * as a record's actions show them (console/src/record-actions.tsx).
 */
import { ApiError } from './api.js'

export function refusalText (err: unknown, label: (campo: string) => string = (c) => c): string {
  if (!(err instanceof ApiError)) return 'Error inesperado'
  return [err.message, ...(err.detalles ?? []).map((d) => `${label(d.campo)}: ${d.mensaje}`)].join('. ')
}

/** The API's message for one field (`motivo`), to show beside its input. */
export function fieldProblem (err: unknown, campo: string): string | undefined {
  return err instanceof ApiError ? err.detalles?.find((d) => d.campo === campo)?.mensaje : undefined
}
