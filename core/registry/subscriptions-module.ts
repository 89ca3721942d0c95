/**
 * The fields the module of webhook subscriptions must declare
 * (`subscriptions: true`; docs/user-guide.md "Webhooks (suscripciones)"):
 * the deliverer (records/subscriptions/) reads them by these names.
 */
import { RegistryProblem } from './build.js'
import type { FieldDef, ModuleDef } from './types.js'

export function checkSubscriptionsModule (mod: ModuleDef): void {
  const path = ['modules', mod.name, 'fields']
  const need = (name: string, ok: (f: FieldDef) => boolean, what: string): FieldDef => {
    const f = mod.fieldMap.get(name)
    if (f === undefined || !ok(f) || f.encrypted) throw new RegistryProblem(f === undefined ? ['modules', mod.name] : [...path, name], `the subscriptions module must declare ${what}, not encrypted`)
    return f
  }
  need('url', (f) => f.type === 'string' && f.required, '"url" as a required string')
  need('modulos', (f) => f.type === 'array' && f.required && f.items === undefined, '"modulos" as a required array of names')
  need('tipos', (f) => f.type === 'array' && f.items === undefined, '"tipos" as an array of names')
  need('filtro', (f) => f.type === 'string', '"filtro" as a string')
  need('activa', (f) => f.type === 'boolean', '"activa" as a boolean')
  need('secreto', (f) => f.type === 'password' && !f.required, '"secreto" as an optional field of type password')
  need('rol', (f) => f.type === 'string' && f.required, '"rol" as a required string (the policy checks it names a role)')
}
