/**
 * A module's `documento` (docs/administrator-guide.md "modules.yaml
 * reference"): the fields a printed copy leaves out (`excluir`), e.g. the
 * complainant's copy of a denuncia without the officers' observations.
 * Each must be a field of the module; a password is never printed anyway.
 */
import { hint } from './suggest.js'
import { RegistryProblem } from './build.js'
import type { FieldDef } from './types.js'

export function printedExclusionsOf (declared: { excluir?: string[] } | undefined, fields: readonly FieldDef[], path: Array<string | number>): readonly string[] {
  return Object.freeze((declared?.excluir ?? []).map((name, i) => {
    if (!fields.some((f) => f.name === name)) {
      throw new RegistryProblem([...path, 'excluir', i], `unknown field "${name}"${hint(name, fields.map((f) => f.name))}`)
    }
    return name
  }))
}
