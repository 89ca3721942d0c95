/**
 * The `operationId`s of a module's generated routes (docs/user-guide.md "API explorer and OpenAPI document"): a verb and
 * the module name in PascalCase — `listDenuncias`, `getDenuncias`,
 * `createSala092`, `verifyObjetosPerdidos` — stable while the module keeps
 * its name, and what a generated client calls its methods.
 */
import type { ModuleDef } from '../core/registry/types.js'

/** `objetos_perdidos` → `ObjetosPerdidos`. */
function pascal (name: string): string {
  return name.split(/[^A-Za-z0-9]+/).filter((w) => w !== '').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
}

/** `verb` is what the operation does, in English (`list`, `verify`; generate/operations/). */
export function operationName (mod: ModuleDef): (verb: string) => string {
  const noun = pascal(mod.name)
  return (verb) => `${verb}${noun}`
}
