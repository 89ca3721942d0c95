/**
 * Role-based permissions (interface "Authentication", SPEC S8): a role holds
 * strings `{module}.{action}` with `*` wildcards on either side. `*`
 * includes `descifrar`. Pure and precomputed, so a check is two Set lookups.
 */
import type { Action, Registry } from './registry/types.js'

export interface PermissionTable {
  can (role: string, module: string, action: Action): boolean
  /** True when the role holds `*.*` (only such a role manages its peers). */
  isSuper (role: string): boolean
}

export function compilePermissions (registry: Registry): PermissionTable {
  const grants = new Map<string, Set<string>>()
  for (const role of registry.roles) grants.set(role.name, new Set(role.permissions))
  const can = (role: string, module: string, action: Action): boolean => {
    const g = grants.get(role)
    if (g === undefined) return false
    return g.has('*.*') || g.has(`${module}.*`) || g.has(`${module}.${action}`) || g.has(`*.${action}`)
  }
  return Object.freeze({ can, isSuper: (role: string) => grants.get(role)?.has('*.*') ?? false })
}
