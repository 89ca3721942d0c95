/**
 * The records hook bus: extension points of every write, for modules whose
 * records mean more than data (users: who may grant which role, which
 * cached sessions to forget; tomorrow webhooks or notifications). Any number
 * of subscribers per module (or `*` for every module) and per phase, run in
 * the order they subscribed. Modules nobody subscribed to pay nothing.
 *
 * Phases of a write:
 * - `before`: the write is checked and about to happen; for an update,
 *   delete or restore the stored row is read and locked (inside the
 *   transaction), for a create nothing is stored yet. Throw an AppError to
 *   refuse the write.
 * - `inside`: the write is done, inside its transaction (`em` writes with
 *   it); a throw rolls everything back.
 * - `after`: the transaction committed.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Caller } from '../core/access.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import type { ColumnValue } from './normalize.js'
import type { Row } from '../db/module-entity.js'

export type WriteAction = 'crear' | 'editar' | 'eliminar' | 'restaurar'
export type Phase = 'before' | 'inside' | 'after'

export interface WriteEvent {
  readonly module: ModuleDef
  readonly action: WriteAction
  readonly caller: Caller
  /** The stored row before the change (absent on create). */
  readonly before?: Row
  /** The values being written (empty on delete and restore). */
  readonly values: ReadonlyMap<FieldDef, ColumnValue>
  /** The row as written (`inside` and `after`). */
  readonly after?: Row
  /** The write's transaction (`before` of an update/delete/restore, and `inside`). */
  readonly em?: EntityManager
}

export type Subscriber = (event: WriteEvent) => void | Promise<void>

export class HookBus {
  private readonly subscribers = new Map<string, Subscriber[]>()

  /** Subscribes to a phase of the writes of one module, or of all with `*`. */
  on (module: string, phase: Phase, fn: Subscriber): this {
    const key = `${module}\u0000${phase}`
    this.subscribers.set(key, [...(this.subscribers.get(key) ?? []), fn])
    return this
  }

  async emit (phase: Phase, event: WriteEvent): Promise<void> {
    const own = this.subscribers.get(`${event.module.name}\u0000${phase}`) ?? []
    const all = this.subscribers.get(`*\u0000${phase}`) ?? []
    for (const fn of [...all, ...own]) await fn(event)
  }
}
