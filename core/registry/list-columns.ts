/**
 * A module's `list_columns` (docs/administrator-guide.md "modules.yaml
 * reference"): the fields a list shows beside `_id` (the console's list
 * screen, GET /me/modulos `columnas`). Declared, each must be a field of
 * the module a table cell can show; by default the state field and the
 * first short fields, required ones first, never an encrypted one.
 */
import { hint } from './suggest.js'
import { RegistryProblem } from './build.js'
import type { FieldDef, FieldType } from './types.js'

/** Types a table cell shows well: short, and readable without decryption. */
const DEFAULT_TYPES = new Set<FieldType>(['string', 'integer', 'decimal', 'boolean', 'date', 'datetime', 'time', 'ref'])
/** What a cell cannot show: a password is never read back; files and lists are shown on the record's screen. */
const REFUSED = new Set<FieldType>(['password', 'file', 'array'])
const DEFAULT_COUNT = 4

export function listColumnsOf (declared: readonly string[] | undefined, fields: readonly FieldDef[], stateField: string | undefined, path: Array<string | number>): readonly string[] {
  if (declared !== undefined) {
    return Object.freeze(declared.map((name, i) => {
      const at = (message: string): never => { throw new RegistryProblem([...path, i], message) }
      const f = fields.find((x) => x.name === name)
      if (f === undefined) return at(`unknown field "${name}"${hint(name, fields.map((x) => x.name))}`)
      if (REFUSED.has(f.type)) at(`"${name}" is a ${f.type} field; a list column takes a field a table cell can show (not password, file or array)`)
      return name
    }))
  }
  const fit = fields.filter((f) => DEFAULT_TYPES.has(f.type) && !f.encrypted && f.name !== stateField)
  const ordered = [...fit.filter((f) => f.required), ...fit.filter((f) => !f.required)]
  const picked = new Set([...ordered.slice(0, stateField === undefined ? DEFAULT_COUNT : DEFAULT_COUNT - 1).map((f) => f.name), ...(stateField === undefined ? [] : [stateField])])
  return Object.freeze(fields.filter((f) => picked.has(f.name)).map((f) => f.name))
}
