/**
 * What modules.yaml asks to index (docs/administrator-guide.md "Indexes"):
 * a field's `indexed` and `contains_index`, a module's `full_text`. Filtering
 * and indexing are separate decisions: a field stays filterable by default,
 * and an index is paid for on every create, so it exists where the file
 * asks for it or the field's role needs it (state field, owner fields,
 * refs, unique fields, enums, dates and date-times).
 */
import { typeOf, operatorsOf } from '../field-types/index.js'
import type { FieldFile, ModuleFile } from './schema.js'
import { OPTIONAL_SYSTEM_INDEXES } from '../system-fields.js'
import type { AccessTable } from '../access.js'
import type { FieldDef, RoleDef } from './types.js'
import { ACTIONS } from './types.js'
import { RegistryProblem } from './build.js'
import { hint } from './suggest.js'

/** The keys' fit to the field alone (its type, encryption, filterability); its role is judged by withIndex. */
export function checkIndexKeys (f: FieldFile, path: Array<string | number>): void {
  const at = (key: string, message: string): never => { throw new RegistryProblem([...path, key], message) }
  const encrypted = f.encrypted === true
  if (f.indexed !== undefined) {
    if (encrypted) at('indexed', 'encrypted fields are indexed through "searchable" (a blind index), not "indexed"')
    if (f.filterable === false) at('indexed', 'a field with "filterable: false" takes no filter to index')
    if (!typeOf(f).filterable && typeOf(f).searchOperators.length === 0) at('indexed', `${f.type} fields take no filter to index`)
  }
  if (f.contains_index === true) {
    if (encrypted) at('contains_index', 'encrypted fields are searched through "searchable" (a blind index), not "contains_index"')
    if (!typeOf(f).textSearch) at('contains_index', `only string and text fields take contiene (this one is ${f.type})`)
    if (f.enum !== undefined) at('contains_index', 'contiene on an enum field is served by its own index (the values it names); remove "contains_index"')
    if (f.filterable === false && f.type === 'string') at('contains_index', 'a field with "filterable: false" takes no contiene to index')
  }
}

/** Roles whose queries need the index whatever the file says: the state field, owner fields (scope), unique fields (their constraint). */
function requiredBy (f: FieldDef, state: boolean, owner: boolean): string | undefined {
  if (state) return 'the state field'
  if (owner) return 'an owner field (every "propios" scope reads it)'
  if (f.unique) return 'a unique field (its constraint is an index)'
  return undefined
}

/** `field` with its final `indexed`: declared, or implied by its role; `indexed: false` only where the role allows it. */
export function withIndex (f: FieldDef, file: FieldFile, path: Array<string | number>, state: boolean, owner: boolean): FieldDef {
  const required = requiredBy(f, state, owner)
  if (file.indexed === false && required !== undefined) {
    throw new RegistryProblem([...path, 'indexed'], `"indexed: false" is not allowed on ${required}; remove it`)
  }
  const implied = required !== undefined || f.type === 'ref' || f.enum !== undefined || f.type === 'date' || f.type === 'datetime'
  const indexable = !f.encrypted && operatorsOf(f).length > 0
  return Object.freeze({ ...f, indexed: indexable && (file.indexed ?? implied) })
}

/** `full_text`: the string and text fields `q` searches; by default the module's unencrypted text fields. */
export function fullTextOf (m: ModuleFile, fieldMap: ReadonlyMap<string, FieldDef>, path: Array<string | number>): readonly FieldDef[] {
  if (m.full_text === undefined) return Object.freeze([...fieldMap.values()].filter((f) => f.type === 'text' && !f.encrypted))
  return Object.freeze(m.full_text.map((name, i) => {
    const at = (message: string): never => { throw new RegistryProblem([...path, i], message) }
    const f = fieldMap.get(name)
    if (f === undefined) return at(`unknown field "${name}"${hint(name, [...fieldMap.keys()])}`)
    if (!typeOf(f).textSearch) at(`"${name}" is a ${f.type} field; full_text takes string and text fields`)
    if (f.encrypted) at(`"${name}" is encrypted: its text is not searchable (encrypted fields are found through "searchable", a blind index)`)
    return f
  }))
}


/** `system_fields`: the system columns that keep their b-tree (all of OPTIONAL_SYSTEM_INDEXES unless `indexed: false`). */
export function systemIndexesOf (m: ModuleFile): readonly string[] {
  const declared: Readonly<Record<string, { readonly indexed: boolean } | undefined>> = m.system_fields ?? {}
  return Object.freeze(OPTIONAL_SYSTEM_INDEXES.filter((name) => declared[name]?.indexed !== false))
}

/**
 * `_created_by` decides whose a record is in every module (S11): a role that
 * limits the module to its own records (core/access.ts, the scope the
 * requests get) reads it on every list, so its index cannot be left out there.
 */
export function checkCreatorIndex (module: string, indexed: readonly string[], roles: readonly RoleDef[], access: AccessTable): void {
  if (indexed.includes('_created_by')) return
  for (const role of roles) {
    const action = ACTIONS.find((a) => access.scope(role.name, module, a) === 'own')
    if (action !== undefined) {
      throw new RegistryProblem(['modules', module, 'system_fields', '_created_by', 'indexed'],
        `"indexed: false" is not allowed on _created_by here: role "${role.name}" limits ${module}.${action} to own records, and every "propios" scope reads _created_by; remove it`)
    }
  }
}
