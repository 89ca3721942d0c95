/**
 * RecordsLayer: the records layer as the app holds it (`app.records`,
 * docs/architecture.md "Glossary"), built once from the registry, the
 * access table, the cipher and the stores. It hands every request its
 * caller's records (`forRequest`) and the service's own writes a module's
 * storage (`storage`). The hook bus lives here so extensions subscribe
 * once and every write of every module reaches them.
 */
import type { AccessTable } from '../core/access.js'
import type { FieldCipher } from '../core/crypto.js'
import type { ModuleDef, Registry } from '../core/registry/types.js'
import type { SequenceStore } from '../stores/sequences/contract.js'
import { CallerRecords } from './caller-records.js'
import { HookBus } from './hooks.js'
import type { Checkpoints } from './integrity/checkpoints.js'
import { modulePlan, type ModulePlan, type RecordsServiceDeps, type RequestContext } from './records-service.js'
import type { ModuleStorage } from './storage/module-storage.js'
import { SqlModuleStorage } from './storage/sql-module-storage.js'

export interface RecordsLayerDeps {
  readonly registry: Registry
  readonly access: AccessTable
  readonly cipher: FieldCipher
  readonly sequences: SequenceStore
  readonly timeZone: string
  /** The global chain's checkpoints, for /verificar (records/integrity/checkpoints.ts). */
  readonly checkpoints?: Checkpoints
  /** Where evidence files live and the largest upload (records/files/). */
  readonly files?: RecordsServiceDeps['files']
  /** The database pool's connections: most statements of one module's reads by id at once (db/row-batch.ts); default unbounded. */
  readonly connections?: number
}

export class RecordsLayer {
  readonly hooks = new HookBus()
  readonly access: AccessTable
  private readonly plans: ReadonlyMap<string, ModulePlan>

  constructor (private readonly deps: RecordsLayerDeps) {
    this.access = deps.access
    const storageDeps = { ...deps, hooks: this.hooks }
    this.plans = new Map(deps.registry.modules.map((m) => [m.name, modulePlan(m, new SqlModuleStorage(m, storageDeps))]))
  }

  /** Every module's records as this request's caller may see them. */
  forRequest (ctx: RequestContext): CallerRecords {
    return new CallerRecords(this.plans, this.deps, ctx)
  }

  /** The storage side of a module, for writes the service makes itself (the first superadmin, the command line). */
  storage (mod: ModuleDef): ModuleStorage {
    return this.plans.get(mod.name)!.storage
  }
}
