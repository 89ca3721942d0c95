/**
 * How the users module's rows are read: its entity, the column of each
 * login field, and the snapshot authentication keeps of a user. One place,
 * so login, /me, the per-request check and the users policy agree.
 */
import type { Db } from '../../db/statement.js'
import type { Registry } from '../../core/registry/types.js'
import { entityName } from '../../db/module-entity.js'
import { findRow } from '../../db/row-query.js'
import { valueColumn } from '../../db/columns.js'
import type { UserSnapshot } from '../../stores/sessions/contract.js'
import type { LoginColumns } from '../../db/session-entity.js'

export interface UsersTable {
  readonly entity: string
  /** Table and columns a login depends on (db/session-entity.ts: insertSessionIfCurrent). */
  readonly login: LoginColumns
  /** Column of a field of the users module (`username`, `password`, `rol` …). */
  column (field: string): string
  snapshot (row: Record<string, unknown>): UserSnapshot
  /** The live (not deleted) user matching `where` (an id, or `{ [column('username')]: … }`), or null. */
  findLive (em: Db, where: Record<string, unknown>): Promise<Record<string, unknown> | null>
}

export function usersTable (registry: Registry): UsersTable {
  const users = registry.usersModule
  const column = (field: string): string => valueColumn(users.fieldMap.get(field)!)
  const personalId = users.fieldMap.has('personal_id') ? column('personal_id') : undefined
  return {
    entity: entityName(users),
    login: { table: users.table, activo: column('activo'), password: column('password') },
    column,
    findLive: async (em, where) => await findRow(em, entityName(users), { ...where, _deleted: null }),
    snapshot: (row) => ({
      id: row._id as string,
      username: row[column('username')] as string,
      nombre: (row[column('nombre')] ?? '') as string,
      rol: row[column('rol')] as string,
      activo: row[column('activo')] !== false,
      personalId: personalId === undefined ? null : (row[personalId] ?? null) as string | null,
    }),
  }
}
