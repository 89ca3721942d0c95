/**
 * Extension points of the generated record routes, for modules whose
 * records mean more than data (the users module: who may grant which role,
 * which cached sessions to forget). Registered by infrastructure plugins,
 * looked up by module name; modules without hooks pay nothing.
 */
import type { FieldDef } from '../core/registry/types.js'
import type { ColumnValue } from './normalize.js'
import type { Row } from '../db/module-entity.js'

export interface Caller {
  readonly id: string
  readonly username: string
  readonly rol: string
}

export interface WriteEvent {
  readonly action: 'crear' | 'editar' | 'eliminar'
  readonly caller: Caller
  /** The stored row before the change (absent on create). */
  readonly before?: Row
  /** The values being written (empty on delete). */
  readonly values: ReadonlyMap<FieldDef, ColumnValue>
}

export interface ModuleHooks {
  /** Throw an AppError to refuse the write. Runs before anything is stored. */
  beforeWrite? (event: WriteEvent): void | Promise<void>
  /** Runs after the change committed. */
  afterWrite? (event: WriteEvent & { readonly after: Row }): void | Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    moduleHooks: Map<string, ModuleHooks>
  }
}
