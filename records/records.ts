/**
 * The records layer's entry point: built once per app from the registry,
 * the access table, the cipher and the stores; hands every request a
 * records service for its caller (`forRequest`). The hook bus lives here so
 * extensions subscribe once and every write of every module reaches them.
 */
import type { AccessTable } from '../core/access.js'
import type { FieldCipher } from '../core/crypto.js'
import type { Checkpoint, Checkpoints } from './checkpoints.js'
import type { ModuleDef, Registry } from '../core/registry/types.js'
import type { SequenceStore } from '../stores/sequences/contract.js'
import { HookBus } from './hooks.js'
import { ModuleRecords, modulePlan, type ModulePlan, type RequestContext } from './module-records.js'
import { createRecordService, type RecordService } from './record-service.js'
import { listReads } from './read-log.js'
import { AppError, DETAILS, MOTIVOS } from '../core/errors.js'

export interface RecordsDeps {
  readonly registry: Registry
  readonly access: AccessTable
  readonly cipher: FieldCipher
  readonly sequences: SequenceStore
  readonly timeZone: string
  /** The global chain's checkpoints, for /verificar (records/checkpoints.ts). */
  readonly checkpoints?: Checkpoints
}

/** Every module's records as one request's caller may see them. */
export interface CallerRecords {
  of (mod: ModuleDef): ModuleRecords
  /** A page of the read log (superadmins only, else 403). */
  reads (query: Record<string, unknown>): ReturnType<typeof listReads>
  /** Seals the global chain and publishes a signed checkpoint of its head now (superadmins only, else 403). */
  checkpoint (): Promise<CheckpointAnswer>
}

export interface CheckpointAnswer {
  /** The checkpoint published; null when the chain no longer extends the newest one known (`motivo`). */
  punto_control: Checkpoint | null
  /** Entries sealed by this run. */
  sellados: number
  /** Ed25519 public key (raw, base64) that verifies it. */
  clave_publica: string
  motivo?: string
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
  const plans = new Map<string, ModulePlan>(deps.registry.modules.map((m) => [m.name, modulePlan(m, createRecordService(m, { ...deps, hooks }))]))
  const storage = (mod: ModuleDef): RecordService => plans.get(mod.name)!.service
  return {
    hooks,
    access: deps.access,
    storage,
    forRequest (ctx) {
      return new RequestRecords(plans, deps, ctx)
    },
  }
}

/** One request's records: a module's service is built on first use and kept for the request. */
class RequestRecords implements CallerRecords {
  private last: ModuleRecords | undefined
  private lastName = ''

  constructor (private readonly plans: ReadonlyMap<string, ModulePlan>, private readonly deps: RecordsDeps, private readonly ctx: RequestContext) {}

  of (mod: ModuleDef): ModuleRecords {
    // A request nearly always works on one module: keep that one.
    if (this.last === undefined || this.lastName !== mod.name) {
      this.last = new ModuleRecords(this.plans.get(mod.name)!, this.deps, this.ctx)
      this.lastName = mod.name
    }
    return this.last
  }

  async reads (query: Record<string, unknown>): ReturnType<typeof listReads> {
    if (!this.deps.access.isSuper(this.ctx.caller.rol)) throw new AppError('SIN_PERMISOS')
    return listReads(this.ctx.em, query, this.deps.timeZone)
  }

  async checkpoint (): Promise<CheckpointAnswer> {
    if (!this.deps.access.isSuper(this.ctx.caller.rol)) throw new AppError('SIN_PERMISOS')
    const checkpoints = this.deps.checkpoints!
    const { checkpoint, sealed, refused, unpublished } = await checkpoints.run(this.ctx.em, true)
    // Signed but not written to the store: the caller asked for a published checkpoint.
    if (unpublished !== undefined) throw new AppError('SERVICIO_NO_DISPONIBLE', [{ campo: 'punto_control', mensaje: DETAILS.PUNTO_CONTROL_NO_PUBLICADO }])
    return {
      punto_control: checkpoint ?? null,
      sellados: sealed?.sealed ?? 0,
      clave_publica: checkpoints.signer.publicKey,
      ...(refused !== undefined && { motivo: MOTIVOS[refused] }),
    }
  }
}
