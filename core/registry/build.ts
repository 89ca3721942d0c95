/**
 * Turns a schema-valid modules.yaml into the frozen Registry, enforcing the
 * rules a JSON schema cannot express. Problems are thrown as RegistryProblem
 * with the path of the offending key, which load.ts turns into a line.
 */
import { ACTIONS, OWN_SUFFIX, type FieldDef, type ModuleDef, type Registry, type RoleDef, type TransitionDef } from './types.js'
import type { FieldFile, ItemFieldFile, ModuleFile, RegistryFile } from './schema.js'
import { foldToAscii } from './fold.js'
import { hint } from './suggest.js'
import { SYSTEM_COLUMNS } from '../system-fields.js'
// The registry asks each type what it allows (defaults, filtering, lengths):
// core/field-types/ is the one home of what a type means.
import { FIELD_TYPES_IMPL } from '../field-types/index.js'
import { checkedFormat } from './field-format.js'
import { labelsOf } from './field-labels.js'
import { checkSubscriptionsModule } from './subscriptions-module.js'
import { checkCreatorIndex, checkIndexKeys, fullTextOf, systemIndexesOf, withIndex } from './index-keys.js'
import { listColumnsOf } from './list-columns.js'
import { printedExclusionsOf } from './printed-fields.js'
import { retentionOf } from './retention.js'
import { compileAccess } from '../access.js'

export class RegistryProblem extends Error {
  constructor (readonly path: Array<string | number>, message: string) {
    super(message)
  }
}

/** Path segments the service itself uses; a module may not take them. */
export const RESERVED_PATHS = ['auth', 'me', 'health', 'ready', 'docs', 'metrics', 'auditoria', 'consola', 'documentos', 'proteccion-datos'] as const

function buildField (name: string, f: FieldFile, path: Array<string | number>, moduleNames: string[]): FieldDef {
  const p = (key: string): Array<string | number> => [...path, key]
  const at = (key: string, message: string): never => { throw new RegistryProblem(p(key), message) }
  if (f.type === 'ref' && f.ref === undefined) at('type', 'a field of type ref needs "ref: <module>"')
  if (f.ref !== undefined) {
    if (f.type !== 'ref') at('ref', 'only fields of type ref may name a "ref"')
    if (!moduleNames.includes(f.ref)) at('ref', `unknown module "${f.ref}"${hint(f.ref, moduleNames)}`)
  }
  if (f.enum !== undefined && f.type !== 'string') at('enum', 'only string fields may declare enum values')
  if (f.personal === true && f.type === 'password') at('personal', 'a password is never shown, printed or exported: it needs no "personal"')
  if (f.personal === true && f.type === 'file') at('personal', 'evidence files are not erased with a record\'s personal data (docs/decisions.md "Erasing personal data keeps the chain")')
  if (f.personal === true && f.items !== undefined) at('personal', 'an array with declared items is personal by its sub-fields: set "personal: true" on those that are')
  if (f.searchable === true && (f.encrypted !== true || f.type === 'file')) at('searchable', 'only encrypted fields are searchable through a blind index')
  if ((f.min_length !== undefined || f.max_length !== undefined || f.pattern !== undefined) &&
      !['string', 'text', 'password'].includes(f.type)) {
    at(f.max_length !== undefined ? 'max_length' : f.min_length !== undefined ? 'min_length' : 'pattern', `not allowed on a ${f.type} field`)
  }
  if ((f.min !== undefined || f.max !== undefined) && !['integer', 'decimal'].includes(f.type)) {
    at(f.min !== undefined ? 'min' : 'max', `not allowed on a ${f.type} field`)
  }
  if (f.max_items !== undefined && f.type !== 'array' && f.type !== 'file') at('max_items', 'only array and file fields take max_items')
  if (f.items !== undefined && f.type !== 'array') at('items', `only array fields declare items (this one is ${f.type})`)
  if (f.items !== undefined && f.encrypted === true) at('encrypted', 'an array with declared items is not encrypted whole: set "encrypted: true" on the sub-fields to encrypt')
  const type = FIELD_TYPES_IMPL[f.type]
  if (f.filterable === true && (!type.filterable || (f.encrypted === true))) {
    at('filterable', f.encrypted === true ? 'encrypted fields are filtered through "searchable", not "filterable"' : `${f.type} fields cannot be filtered`)
  }
  checkIndexKeys(f, path)
  const format = checkedFormat(f, at)
  const labels = labelsOf(name, f, (keys, message) => { throw new RegistryProblem([...path, ...keys], message) })
  if (f.pattern !== undefined) {
    try { new RegExp(f.pattern, 'u') } catch { at('pattern', `"${f.pattern}" is not a valid regular expression`) }
  }
  if (f.default !== undefined) {
    const problem = type.defaultProblem(f.default, f.enum)
    if (problem !== undefined) at('default', problem)
  }
  const def: FieldDef = {
    name,
    column: f.column ?? foldToAscii(name),
    type: f.type,
    required: f.required ?? false,
    unique: f.unique ?? false,
    // A file field's `encrypted` is its bytes' (records/files/), not its value's.
    encrypted: f.type !== 'file' && (f.encrypted ?? false),
    ...(f.type === 'file' && f.encrypted === true && { encryptedFiles: true }),
    searchable: f.searchable ?? false,
    personal: (f.personal ?? false) || (f.type !== 'file' && (f.encrypted ?? false)),
    filterable: f.filterable ?? (type.filterable && f.encrypted !== true),
    // Settled by buildModule, which knows the field's role (state, owner).
    indexed: false,
    containsIndex: f.contains_index ?? false,
    ...(f.default !== undefined && { default: f.default }),
    ...(f.enum !== undefined && { enum: Object.freeze([...f.enum]) }),
    ...(f.ref !== undefined && { ref: f.ref }),
    ...(f.min_length !== undefined && { minLength: f.min_length }),
    ...(type.defaultMaxLength !== undefined || f.max_length !== undefined
      ? { maxLength: f.max_length ?? type.defaultMaxLength }
      : {}),
    ...(f.min !== undefined && { min: f.min }),
    ...(f.max !== undefined && { max: f.max }),
    ...(f.pattern !== undefined && { pattern: f.pattern }),
    ...(format !== undefined && { format }),
    ...(type.defaultMaxItems !== undefined && { maxItems: f.max_items ?? type.defaultMaxItems }),
    ...(f.description !== undefined && { description: f.description }),
    ...labels,
    ...(f.items !== undefined && { items: itemsOf(f.items, p('items'), moduleNames) }),
  }
  return Object.freeze(def)
}

/** The sub-fields of a structured array's items: scalar fields, checked like top-level ones, never filtered. */
function itemsOf (items: Record<string, ItemFieldFile>, path: Array<string | number>, moduleNames: string[]): readonly FieldDef[] {
  return Object.freeze(Object.entries(items).map(([name, sub]) => Object.freeze({ ...buildField(name, sub, [...path, name], moduleNames), filterable: false })))
}

function buildModule (name: string, m: ModuleFile, moduleNames: string[], staffName: string | undefined): ModuleDef {
  const path: Array<string | number> = ['modules', name]
  const fields: FieldDef[] = []
  const columns = new Map<string, string>()
  for (const [fname, f] of Object.entries(m.fields)) {
    if (SYSTEM_COLUMNS.includes(fname) || fname.startsWith('_')) throw new RegistryProblem([...path, 'fields', fname], 'field names may not start with "_" (reserved for system fields)')
    const def = buildField(fname, f, [...path, 'fields', fname], moduleNames)
    const clash = columns.get(def.column)
    if (clash !== undefined) throw new RegistryProblem([...path, 'fields', fname], `column name "${def.column}" is already used by field "${clash}"; set "column:" to tell them apart`)
    columns.set(def.column, fname)
    fields.push(def)
  }
  const fieldMap = new Map(fields.map((f) => [f.name, f]))
  const fieldNames = [...fieldMap.keys()]
  const stateField = m.state_field
  if (stateField !== undefined) {
    const f = fieldMap.get(stateField)
    if (f === undefined) throw new RegistryProblem([...path, 'state_field'], `unknown field "${stateField}"${hint(stateField, fieldNames)}`)
    if (f.enum === undefined) throw new RegistryProblem([...path, 'state_field'], `the state field "${stateField}" must declare enum values`)
  }
  const transitions: TransitionDef[] = []
  for (const [i, t] of (m.transitions ?? []).entries()) {
    const tpath = [...path, 'transitions', i]
    const states = stateField === undefined ? undefined : fieldMap.get(stateField)?.enum
    if (states === undefined) throw new RegistryProblem(tpath, 'transitions need a "state_field"')
    const froms = Array.isArray(t.from) ? t.from : [t.from]
    for (const s of [...froms, t.to]) {
      if (!states.includes(s)) throw new RegistryProblem(tpath, `"${s}" is not a state of ${stateField}${hint(s, states)}`)
    }
    for (const r of t.requires ?? []) {
      if (!fieldMap.has(r)) throw new RegistryProblem([...tpath, 'requires'], `unknown field "${r}"${hint(r, fieldNames)}`)
    }
    for (const from of froms) transitions.push(Object.freeze({ from, to: t.to, requires: Object.freeze([...(t.requires ?? [])]) }))
  }
  const owners = ownersOf(name, m, fieldMap, staffName)
  const { ownedById } = owners
  // Each field's final `indexed`, now that its role is known; the maps and the owners point at the settled fields.
  const settled = fields.map((f) => withIndex(f, m.fields[f.name]!, [...path, 'fields', f.name], f.name === stateField, owners.ownerFields.includes(f)))
  fields.splice(0, fields.length, ...settled)
  for (const f of settled) fieldMap.set(f.name, f)
  const ownerFields = Object.freeze(owners.ownerFields.map((o) => fieldMap.get(o.name)!))
  const fullText = fullTextOf(m, fieldMap, [...path, 'full_text'])
  const def: ModuleDef = {
    name,
    path: m.path ?? name,
    prefix: m.prefix,
    table: m.table ?? foldToAscii(name),
    label: m.label ?? name,
    ...(m.description !== undefined && { description: m.description }),
    ...(m.help !== undefined && { help: m.help }),
    ...(stateField !== undefined && { stateField }),
    transitions: Object.freeze(transitions),
    users: m.users ?? false,
    subscriptions: m.subscriptions ?? false,
    fields: Object.freeze(fields),
    fieldMap,
    ownerFields,
    ownedById,
    fullText,
    indexedSystemFields: systemIndexesOf(m),
    listColumns: listColumnsOf(m.list_columns, fields, stateField, [...path, 'list_columns']),
    printExcluded: printedExclusionsOf(m.documento, fields, [...path, 'documento']),
    ...(m.conservacion !== undefined && { retention: retentionOf(m.conservacion, fields, stateField, [...path, 'conservacion']) }),
    personalData: fields.some((f) => f.personal || (f.items ?? []).some((s) => s.personal)),
  }
  return Object.freeze(def)
}

/** Resolves `owner_fields` (docs/administrator-guide.md "modules.yaml reference"): refs to the staff module, or `_id` in the staff module itself. */
function ownersOf (name: string, m: ModuleFile, fieldMap: ReadonlyMap<string, FieldDef>, staffName: string | undefined): { ownerFields: readonly FieldDef[], ownedById: boolean } {
  const ownerFields: FieldDef[] = []
  let ownedById = false
  for (const [i, owner] of (m.owner_fields ?? []).entries()) {
    const at = (message: string): never => { throw new RegistryProblem(['modules', name, 'owner_fields', i], message) }
    if (staffName === undefined) at('owner fields need a "personal_id" field of type ref in the users module (it links a login to a staff record)')
    if (owner === '_id') {
      if (name !== staffName) at(`"_id" is an owner field only in module "${staffName!}", the one usuarios.personal_id refers to`)
      ownedById = true
      continue
    }
    const f = fieldMap.get(owner)
    if (f === undefined) at(`unknown field "${owner}"${hint(owner, [...fieldMap.keys()])}`)
    if (f!.type !== 'ref' || f!.ref !== staffName) at(`owner field "${owner}" must be of type ref with "ref: ${staffName!}"`)
    ownerFields.push(f!)
  }
  return { ownerFields: Object.freeze(ownerFields), ownedById }
}

function checkUsersModule (mod: ModuleDef, roles: string[]): void {
  const path = ['modules', mod.name, 'fields']
  const need = (name: string, ok: (f: FieldDef) => boolean, what: string): FieldDef => {
    const f = mod.fieldMap.get(name)
    if (f === undefined || !ok(f)) throw new RegistryProblem(f === undefined ? ['modules', mod.name] : [...path, name], `the users module must declare ${what}`)
    return f
  }
  need('username', (f) => f.type === 'string' && f.unique && f.required, '"username" as a required, unique string')
  need('password', (f) => f.type === 'password' && f.required, '"password" as a required field of type password')
  need('activo', (f) => f.type === 'boolean', '"activo" as a boolean')
  const rol = need('rol', (f) => f.type === 'string' && f.required && f.enum !== undefined, '"rol" as a required string with enum values')
  for (const r of rol.enum!) {
    if (!roles.includes(r)) throw new RegistryProblem([...path, 'rol', 'enum'], `"${r}" is not a role declared under roles${hint(r, roles)}`)
  }
}

function checkPermission (perm: string, path: Array<string | number>, moduleNames: string[]): void {
  const [grant, suffix] = perm.split(':') as [string, string | undefined]
  const [mod, action] = grant.split('.') as [string, string]
  if (mod !== '*' && !moduleNames.includes(mod)) throw new RegistryProblem(path, `"${perm}": unknown module "${mod}"${hint(mod, moduleNames)}`)
  if (action !== '*' && !(ACTIONS as readonly string[]).includes(action)) throw new RegistryProblem(path, `"${perm}": unknown action "${action}"${hint(action, ACTIONS)}; actions are ${ACTIONS.join(', ')} or *`)
  if (suffix !== undefined && suffix !== OWN_SUFFIX) throw new RegistryProblem(path, `"${perm}": unknown limit ":${suffix}"${hint(suffix, [OWN_SUFFIX])}; the only limit is ":${OWN_SUFFIX}" (own records)`)
  if (suffix !== undefined && (action === 'crear' || action === 'importar')) throw new RegistryProblem(path, `"${perm}": ${action} cannot be limited to own records (a record is nobody's before it exists); write "${grant}"`)
}

function uniqueBy (modules: ModuleDef[], key: 'path' | 'prefix' | 'table'): void {
  const seen = new Map<string, string>()
  for (const m of modules) {
    const other = seen.get(m[key])
    if (other !== undefined) throw new RegistryProblem(['modules', m.name, key], `${key} "${m[key]}" is already used by module "${other}"`)
    seen.set(m[key], m.name)
  }
}

export function buildRegistry (file: RegistryFile, fileName: string): Registry {
  const moduleNames = Object.keys(file.modules)
  const roleNames = Object.keys(file.roles)
  const usersNames = moduleNames.filter((n) => file.modules[n]!.users === true)
  if (usersNames.length !== 1) throw new RegistryProblem(['modules'], `exactly one module must set "users: true" (found ${usersNames.length})`)
  const usersName = usersNames[0]
  const personalId = usersName === undefined ? undefined : file.modules[usersName]!.fields.personal_id
  const staffName = personalId?.type === 'ref' ? personalId.ref : undefined
  const modules = moduleNames.map((name) => buildModule(name, file.modules[name]!, moduleNames, staffName))
  for (const m of modules) {
    if ((RESERVED_PATHS as readonly string[]).includes(m.path)) throw new RegistryProblem(['modules', m.name, 'path'], `path "${m.path}" is reserved by the service`)
  }
  for (const m of modules) {
    if (m.table.startsWith('sys_')) throw new RegistryProblem(['modules', m.name, 'table'], `table names starting with "sys_" are reserved for the service's own tables`)
  }
  uniqueBy(modules, 'path'); uniqueBy(modules, 'prefix'); uniqueBy(modules, 'table')
  const users = modules.filter((m) => m.users)
  checkUsersModule(users[0]!, roleNames)
  const subscriptions = modules.filter((m) => m.subscriptions)
  if (subscriptions.length > 1) throw new RegistryProblem(['modules', subscriptions[1]!.name, 'subscriptions'], `only one module may set "subscriptions: true" ("${subscriptions[0]!.name}" does)`)
  if (subscriptions[0] !== undefined) checkSubscriptionsModule(subscriptions[0])
  const roles: RoleDef[] = roleNames.map((name) => {
    const r = file.roles[name]!
    r.permissions.forEach((perm, i) => checkPermission(perm, ['roles', name, 'permissions', i], moduleNames))
    return Object.freeze({ name, permissions: Object.freeze([...r.permissions]), dataProtection: r.proteccion_datos ?? false, ...(r.description !== undefined && { description: r.description }) })
  })
  const registry: Registry = Object.freeze({
    file: fileName,
    modules: Object.freeze(modules),
    roles: Object.freeze(roles),
    byName: new Map(modules.map((m) => [m.name, m])),
    byPath: new Map(modules.map((m) => [m.path, m])),
    roleMap: new Map(roles.map((r) => [r.name, r])),
    usersModule: users[0]!,
    ...(subscriptions[0] !== undefined && { subscriptionsModule: subscriptions[0] }),
    ...(staffName !== undefined && { staffModule: modules.find((m) => m.name === staffName)! }),
  })
  const access = compileAccess(registry)
  for (const m of modules) checkCreatorIndex(m.name, m.indexedSystemFields, roles, access)
  return registry
}
