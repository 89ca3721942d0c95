/**
 * CallerRecords: every module's records as one request's caller may see
 * them (`request.records`, docs/architecture.md "Glossary"). A module's
 * RecordsService is built on first use and kept for the request; the read
 * log and checkpoints, which belong to no module, are asked here.
 */
import { AppError, DETAILS, MOTIVOS } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import type { Checkpoint } from './integrity/checkpoints.js'
import { listReads } from './read-log.js'
import { eraseRecord, type ErasureAnswer } from './data-protection/erasure.js'
import { searchPerson, type PersonAnswer } from './data-protection/interested-party.js'
import { listDecisions, prolong, setBlock, type DecisionView } from './data-protection/decisions.js'
import { reviewPage, runReview, type ReviewPage, type ReviewRun } from './data-protection/retention-review.js'
import { RecordsService, type ModulePlan, type RecordsServiceDeps, type RequestContext } from './records-service.js'

export interface CheckpointAnswer {
  /** The checkpoint published; null when the chain no longer extends the newest one known (`motivo`). */
  punto_control: Checkpoint | null
  /** Entries sealed by this run. */
  sellados: number
  /** Ed25519 public key (raw, base64) that verifies it. */
  clave_publica: string
  motivo?: string
}

export class CallerRecords {
  private last: RecordsService | undefined
  private lastName = ''

  constructor (private readonly plans: ReadonlyMap<string, ModulePlan>, private readonly deps: RecordsServiceDeps, private readonly ctx: RequestContext) {}

  /** One module's records service for this caller. */
  of (mod: ModuleDef): RecordsService {
    // A request nearly always works on one module: keep that one.
    if (this.last === undefined || this.lastName !== mod.name) {
      this.last = new RecordsService(this.plans.get(mod.name)!, this.deps, this.ctx, this)
      this.lastName = mod.name
    }
    return this.last
  }

  /** The module called `name`, if any (the target of a ref, records/expansion.ts). */
  module (name: string): ModuleDef | undefined {
    return this.plans.get(name)?.mod
  }

  /** Erases a record's personal data (data-protection officers only, else 403; records/data-protection/erasure.ts). */
  erase (mod: ModuleDef, id: string, motivo: string): Promise<ErasureAnswer> {
    return eraseRecord(this.ctx.em, this.deps, this.ctx.caller, mod, this.plans.get(mod.name)!.storage, id, motivo)
  }

  /** Every record holding a person's DNI, with who read each (data-protection officers only, else 403; records/data-protection/interested-party.ts). */
  person (query: Record<string, unknown>): Promise<PersonAnswer> {
    return searchPerson(this.ctx.em, this.deps, this.ctx.caller, [...this.plans.values()].map((p) => p.mod), query, this.ctx.route())
  }

  /** Prolongs a record's retention to `hasta` (data-protection officers only; records/data-protection/decisions.ts). */
  prolong (mod: ModuleDef, id: string, body: { motivo: string, hasta: string }): Promise<DecisionView> {
    return prolong(this.ctx.em, this.deps, this.ctx.caller, mod, this.plans.get(mod.name)!.storage, id, body)
  }

  /** Blocks or unblocks a record (data-protection officers only; records/data-protection/decisions.ts). */
  block (mod: ModuleDef, id: string, motivo: string, block: boolean): ReturnType<typeof setBlock> {
    return setBlock(this.ctx.em, this.deps, this.ctx.caller, mod, this.plans.get(mod.name)!.storage, id, motivo, block)
  }

  /** A page of the officers' decisions (superadmins and data-protection officers). */
  decisions (query: Record<string, unknown>): ReturnType<typeof listDecisions> {
    return listDecisions(this.ctx.em, this.deps, this.ctx.caller, this.modules(), query)
  }

  /** A page of the records due for review (data-protection officers only; records/data-protection/retention-review.ts). */
  review (query: Record<string, unknown>): Promise<ReviewPage> {
    return reviewPage(this.ctx.em, this.deps, this.ctx.caller, this.modules(), query)
  }

  /** Runs the retention review now (data-protection officers only), whether or not it ran today. */
  async reviewNow (instance: string): Promise<ReviewRun> {
    if (!this.deps.access.protectsData(this.ctx.caller.rol)) throw new AppError('SIN_PERMISOS')
    return runReview(this.ctx.em, [...this.modules().values()], this.deps.timeZone, instance, { force: true })
  }

  private modules (): ReadonlyMap<string, ModuleDef> {
    return new Map([...this.plans.values()].map((p) => [p.mod.name, p.mod]))
  }

  /** A page of the read log (superadmins and data-protection officers only, else 403). */
  async reads (query: Record<string, unknown>): ReturnType<typeof listReads> {
    if (!this.deps.access.readsLog(this.ctx.caller.rol)) throw new AppError('SIN_PERMISOS')
    return listReads(this.ctx.em, query, this.deps.timeZone)
  }

  /** Seals the global chain and publishes a signed checkpoint of its head now (superadmins only, else 403). */
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
