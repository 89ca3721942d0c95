/**
 * State moves (docs/administrator-guide.md "State machines"): a module with declared transitions allows only
 * those; a move may require fields to hold a value after the update.
 * Modules without declared transitions accept any move between their
 * allowed values. Sending the current state again is no move. Pure.
 */
import { AppError } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'

/** `valueAfter(field)`: the field's stored value once the update applies. */
export function checkMove (mod: ModuleDef, from: unknown, to: unknown, valueAfter: (field: string) => unknown): void {
  if (mod.stateField === undefined || mod.transitions.length === 0 || from === to) return
  const move = mod.transitions.find((t) => t.from === from && t.to === to)
  if (move === undefined) {
    throw new AppError('TRANSICION_NO_PERMITIDA', [{ campo: mod.stateField, mensaje: `no se puede pasar de "${String(from)}" a "${String(to)}"` }])
  }
  const missing = move.requires.filter((f) => valueAfter(f) === null || valueAfter(f) === undefined)
  if (missing.length > 0) {
    throw new AppError('DATOS_REQUERIDOS', missing.map((campo) => ({ campo, mensaje: `es obligatorio para pasar a "${String(to)}"` })))
  }
}
