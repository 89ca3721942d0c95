/**
 * The records layer's entry point: built once per app from the registry,
 * the access table, the cipher and the stores; hands every request a
 * records service for its caller (`forRequest`). The hook bus lives here so
 * extensions subscribe once and every write of every module reaches them.
 */
import type { AccessTable } from '../core/access.js'
import type { FieldCipher } from '../core/crypto.js'
import type { ModuleDef, Registry } from '../core/registry/types.js'
import type { SequenceStore } from '../stores/types.js'
import { HookBus } from './hooks.js'
import { moduleRecords, type ModuleRecords, type RequestContext } from './module-records.js'
import { createRecordService, type RecordService } from './record-service.js'

export interface RecordsDeps {
  readonly registry: Registry
  readonly access: AccessTable
  readonly cipher: FieldCipher
  readonly sequences: SequenceStore
  readonly timeZone: string
}

/** Every module's records as one request's caller may see them. */
export interface CallerRecords {
  of (mod: ModuleDef): ModuleRecords
}

export interface Records {
  readonly hooks: HookBus
  readonly access: AccessTable
  forRequest (ctx: RequestContext): CallerRecords
  /** The storage side of a module, for writes the service makes itself (the first superadmin). */
  storage (mod: ModuleDef): RecordService
}

export function createRecords (deps: RecordsDeps): Records {
  const hooks = new HookBus()
  const services = new Map(deps.registry.modules.map((m) => [m.name, createRecordService(m, { ...deps, hooks })]))
  const storage = (mod: ModuleDef): RecordService => services.get(mod.name)!
  return {
    hooks,
    access: deps.access,
    storage,
    forRequest (ctx) {
      const built = new Map<string, ModuleRecords>()
      return {
        of (mod) {
          let r = built.get(mod.name)
          if (r === undefined) { r = moduleRecords(mod, storage(mod), deps, ctx); built.set(mod.name, r) }
          return r
        },
      }
    },
  }
}
