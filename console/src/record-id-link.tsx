/**
 * A record the data-protection screen names by module and id
 * (docs/user-guide.md "Console", "Personal data"): its id, a link to its
 * screen when the caller sees its module and it is not deleted (a deleted
 * record answers 404 by id); the module by its label.
 */
import type { ModuleInfo } from './modules.js'
import { href } from './route.js'

/** The module named `name` (the API's `modulo` is a module's name, not its path). */
export function moduleNamed (modules: ModuleInfo[], name: string): ModuleInfo | undefined {
  return modules.find((m) => m.nombre === name)
}

/** `denuncias` → `Denuncias`; a module the caller does not see, by its name. */
export function moduleLabel (modules: ModuleInfo[], name: string): string {
  return moduleNamed(modules, name)?.etiqueta ?? name
}

export function RecordIdLink ({ modules, modulo, id, deleted = false }: { modules: ModuleInfo[], modulo: string, id: string, deleted?: boolean }) {
  const mod = moduleNamed(modules, modulo)
  if (mod === undefined || deleted) return <>{id}</>
  return <a href={href([mod.ruta, id])}>{id}</a>
}
