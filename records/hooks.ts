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
import type { Db } from '../db/statement.js'
import type { Caller } from '../core/access.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import type { ColumnValue } from './normalize.js'
import type { Row } from '../db/module-entity.js'
import type { HistoryAction } from '../db/history-entity.js'

/** A write is one of the actions the history records. */
export type WriteAction = HistoryAction
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
  readonly em?: Db
}

export type Subscriber = (event: WriteEvent) => void | Promise<void>

export class HookBus {
  /** Subscribers by module name (or `*`), then by phase. */
  private readonly subscribers = new Map<string, Record<Phase, Subscriber[]>>()

  /** Subscribes to a phase of the writes of one module, or of all with `*`. */
  on (module: string, phase: Phase, fn: Subscriber): this {
    let byPhase = this.subscribers.get(module)
    if (byPhase === undefined) { byPhase = { before: [], inside: [], after: [] }; this.subscribers.set(module, byPhase) }
    byPhase[phase].push(fn)
    return this
  }

  /** Whether anything subscribed to this phase of this module's writes (or of every module's). */
  has (module: string, phase: Phase): boolean {
    return (this.subscribers.get('*')?.[phase].length ?? 0) > 0 || (this.subscribers.get(module)?.[phase].length ?? 0) > 0
  }

  /**
   * Runs the phase's subscribers in order, every module's (`*`) first.
   * Undefined when each returned at once (none subscribed, or none async):
   * the write then waits for nothing, not even a turn of the microtask
   * queue (docs/performance.md "A create runs cold"); else a promise of the
   * rest. Every caller is an async function, so a subscriber's throw
   * reaches it as the rejection it would have been.
   */
  emit (phase: Phase, event: WriteEvent): Promise<void> | undefined {
    const all = this.subscribers.get('*')?.[phase] ?? NONE
    const own = this.subscribers.get(event.module.name)?.[phase] ?? NONE
    return runFrom(all, 0, event, own.length === 0 ? undefined : () => runFrom(own, 0, event))
  }
}

const NONE: readonly Subscriber[] = []

/** `fns` from `from` on, each awaited only when it returned a promise, then `next`. */
function runFrom (fns: readonly Subscriber[], from: number, event: WriteEvent, next?: () => Promise<void> | undefined): Promise<void> | undefined {
  for (let i = from; i < fns.length; i++) {
    const out = fns[i]!(event)
    if (out instanceof Promise) return out.then(() => runFrom(fns, i + 1, event, next))
  }
  return next?.()
}
