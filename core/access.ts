/**
 * Who may do what (interface "Authentication", docs/user-guide.md "Authentication and roles"). A role
 * holds permission strings `{module}.{action}` with `*` on either side
 * (`*` includes `descifrar`), optionally limited to the caller's own
 * records with `:propios`. Compiled once per registry into a table, so a
 * decision is one Map lookup. Pure: no I/O, no HTTP.
 */
import { ACTIONS, OWN_SUFFIX, type Action, type Registry } from './registry/types.js'

/** How much of a module an action reaches: every record, the caller's own, or none. */
export type Scope = 'all' | 'own' | 'none'

/** The caller a records service is built for. */
export interface Caller {
  readonly id: string
  readonly username: string
  readonly rol: string
  /** Staff record linked to this login (`usuarios.personal_id`), or null. */
  readonly personalId: string | null
  /** The session (token `jti`) the caller acts with; absent for the service itself and the command line. */
  readonly jti?: string
}

export interface AccessTable {
  scope (role: string, module: string, action: Action): Scope
  /** True when the role holds `*.*` (only such a role manages its peers). */
  isSuper (role: string): boolean
  /** True for a data-protection officer's role (`proteccion_datos: true`, docs/user-guide.md "Personal data"); `*.*` does not give it. */
  protectsData (role: string): boolean
  /** Who may read the read log (GET /auditoria/lecturas, a record's accesses): superadmins and data-protection officers. */
  readsLog (role: string): boolean
  /** Who may read a blocked record (docs/user-guide.md "Personal data"): superadmins and data-protection officers, every read logged. */
  readsBlocked (role: string): boolean
}

const rank: Record<Scope, number> = { none: 0, own: 1, all: 2 }

export function compileAccess (registry: Registry): AccessTable {
  const table = new Map<string, Scope>()
  const supers = new Set<string>()
  const protectors = new Set(registry.roles.filter((r) => r.dataProtection).map((r) => r.name))
  for (const role of registry.roles) {
    for (const perm of role.permissions) {
      const [grant, suffix] = perm.split(':') as [string, string | undefined]
      if (grant === '*.*' && suffix === undefined) supers.add(role.name)
      const [mod, action] = grant.split('.') as [string, string]
      for (const m of registry.modules) {
        if (mod !== '*' && mod !== m.name) continue
        for (const a of ACTIONS) {
          if (action !== '*' && action !== a) continue
          // `crear` and `importar` are never limited (the registry refuses `crear:propios`; `*:propios` leaves them whole).
          const given: Scope = suffix === OWN_SUFFIX && a !== 'crear' && a !== 'importar' ? 'own' : 'all'
          const key = `${role.name}\u0000${m.name}\u0000${a}`
          if (rank[given] > rank[table.get(key) ?? 'none']) table.set(key, given)
        }
      }
    }
  }
  return Object.freeze({
    scope: (role: string, module: string, action: Action): Scope => table.get(`${role}\u0000${module}\u0000${action}`) ?? 'none',
    isSuper: (role: string) => supers.has(role),
    protectsData: (role: string) => protectors.has(role),
    readsLog: (role: string) => supers.has(role) || protectors.has(role),
    readsBlocked: (role: string) => supers.has(role) || protectors.has(role),
  })
}
